"""The README's "Running the jobs" block, run as written in a fresh shell (only the exports it
shows, the virtualenv's commands on PATH): the README cannot drift from what works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from lakeinlet import jars

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.hudi]  # the block loads Hudi
ROOT = Path(__file__).resolve().parents[2]
START, END = "<!-- readme-flow:start -->", "<!-- readme-flow:end -->"


def readme_commands() -> str:
    block = (ROOT / "README.md").read_text().split(START, 1)[1].split(END, 1)[0]
    return block.strip().strip("`").strip() + "\n"


def user_home(tmp_path: Path) -> Path:
    """A home whose jar cache holds what `make demo`/`make test` fetched (they fetch into the user's
    cache, where the jobs look by default): nothing else of this checkout is visible from it."""
    home = tmp_path / "home"
    cache = home / ".cache" / "lakeinlet"
    cache.mkdir(parents=True)
    (cache / "jars").symlink_to(jars.default_dir(), target_is_directory=True)
    return home


def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    script = tmp_path / "flow.sh"
    script.write_text("set -euo pipefail\n" + readme_commands())
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
           "HOME": str(user_home(tmp_path)), "LANG": "C.UTF-8"}
    env |= {"JAVA_HOME": os.environ["JAVA_HOME"]} if "JAVA_HOME" in os.environ else {}
    t0 = time.monotonic()
    done = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)
    print(f"README flow: {time.monotonic() - t0:.1f} s")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    delta = DeltaTable(str(tmp_path / "lake" / "orders")).to_pyarrow_dataset().to_table()
    assert delta.num_rows == 20 and len(set(delta.column("order_id").to_pylist())) == 20
    from hudi import HudiTableBuilder

    hudi_table = HudiTableBuilder.from_base_uri(str(tmp_path / "lake" / "orders_hudi")).build()
    hudi = pa.Table.from_batches(hudi_table.read())
    assert sorted(hudi.column("order_id").to_pylist()) == sorted(delta.column("order_id").to_pylist())
    assert "checkpoint: 0 (target version" in done.stdout and "dry run: nothing changed" in done.stdout
    assert re.search(r"queue: \d+ visible", done.stdout)
    jvm_noise = [ln for ln in done.stderr.splitlines() if re.search(r"\bWARN\b|\[Stage \d", ln)]
    assert not jvm_noise, jvm_noise[:5]
