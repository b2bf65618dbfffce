"""Every benchmark still runs: bench/smoke.py runs each on tiny inputs in one process (one moto
server, one Spark session); a bench that no longer runs fails here, named with its error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
BENCH = Path(__file__).resolve().parents[2] / "bench"
LIBRARIES = {"_dms.py", "_elasticmq.py", "_landing_profile.py", "_localstack.py", "_merge_sides.py",
             "_source_common.py", "loader_common.py", "report.py", "wide_samples.py", "smoke.py"}
"""Modules the benches import, not benches themselves."""


def smoke_lists() -> tuple[set[str], set[str]]:
    sys.path.insert(0, str(BENCH))
    try:
        import smoke
    finally:
        sys.path.remove(str(BENCH))
    return set(smoke.TINY), set(smoke.LEFT_OUT)


def test_every_bench_is_in_the_smoke_run_or_left_out_with_a_reason() -> None:
    tiny, left_out = smoke_lists()
    benches = {p.name for p in BENCH.glob("*.py")} - LIBRARIES
    assert benches == tiny | left_out and not tiny & left_out, (
        f"add each bench to bench/smoke.py's TINY (or LEFT_OUT, saying why): "
        f"missing {sorted(benches - tiny - left_out)}, gone {sorted((tiny | left_out) - benches)}")


def test_every_bench_runs_on_tiny_inputs() -> None:
    tiny, _ = smoke_lists()
    done = subprocess.run([sys.executable, str(BENCH / "smoke.py")], capture_output=True, text=True,
                          timeout=540, check=False)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-6000:]
    assert set(re.findall(r"^==== smoke: (\S+) ok in", done.stdout, re.M)) == tiny, out[-6000:]
