"""Every benchmark once on tiny inputs, in one process (one JVM): proves each still runs end to end.
Its figures mean nothing; tests/integration/test_bench_smoke.py runs it. Exit 1 names what failed."""

from __future__ import annotations

import argparse
import contextlib
import runpy
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import loader_common

BENCH = Path(__file__).resolve().parent

TINY: dict[str, list[str]] = {
    "changelog_history.py": ["--commits", "12", "--per-commit", "5"],
    "loader_changelog.py": ["--sizes", "2,3", "--per-commit", "2"],
    "loader_throughput.py": ["--files", "2", "--rows", "10", "--wide-rows", "10", "--widths", "narrow",
                             "--formats", "delta", "--pairs", "1", "--no-fixed-cost", "--no-warm-pair"],
    "loader_profile.py": ["--formats", "delta", "--width", "narrow", "--files", "2", "--rows", "10",
                          "--rounds", "1"],
    "loader_large.py": ["--objects", "1", "--gb", "0.0001"],
    "loader_listing.py": ["--sizes", "3", "--new", "2"],
    "compaction.py": ["--batches", "2", "--objects", "2", "--rows", "10", "--repeat", "1"],
    "merge.py": ["--formats", "delta", "--rows", "200", "--changes", "40", "--load-objects", "2",
                 "--change-objects", "2", "--repeat", "1", "--warm", "0"],
    "landing_zone.py": ["--smoke"],
    "lineage_rows.py": ["--files", "1", "--rows", "100", "--rounds", "1"],
    "poller.py": ["--smoke", "--skip-localstack"],
    "readme_flow.py": ["--messages", "2", "--repeat", "1"],
}
"""Each bench's tiny arguments, in the order they run: the loader benches share one moto server and
Spark session (`SharedStack`); lineage_rows.py makes its own session, so it runs after them."""

LEFT_OUT = {
    "scaleout.py": "needs LocalStack and ElasticMQ (their own virtualenv and JVM): minutes to start",
    "cluster_scale.py": "a standalone Spark cluster under spark-submit: the cluster tier runs those commands",
    "lines.py": "runs another bench once per Spark line, each in its own virtualenv",
    "api_cost.py": "starts lakeinlet-poll and lakeinlet-load processes (a JVM each) per committer",
    "freshness.py": "both jobs --continuous as processes (a JVM each) per format, for minutes",
    "routes.py": "a loader process (a JVM) per route beside the routes process",
}
"""Benches left out, and why: each is type-checked in `make lint`; these start their own servers or
JVM processes, which would cost CI more than the rest together."""


class SharedStack:
    """`loader_common.stack` for every bench of the run: one moto server and one Spark session able to
    write every format, started by the first bench that asks and stopped at the end (buckets are
    unique per bench, so they do not meet)."""

    def __init__(self) -> None:
        self._open = contextlib.ExitStack()
        self._parts: Any = None

    @contextlib.contextmanager
    def __call__(self, every: bool = False, log: str | None = None) -> Iterator[Any]:
        if self._parts is None:
            self._parts = self._open.enter_context(_stack(every=True))
        yield self._parts

    def close(self) -> None:
        self._open.close()


_stack = loader_common.stack


def run(script: str, argv: list[str]) -> str | None:
    """Run `script` as `python bench/<script> <argv>`; what went wrong, or None."""
    sys.argv = [str(BENCH / script), *argv]
    try:
        runpy.run_path(str(BENCH / script), run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            return f"exit {exit_.code}"
    except BaseException as exc:  # any failure of a bench is reported, then the next one runs
        traceback.print_exc()
        return f"{type(exc).__name__}: {exc}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", action="append", default=[], help="run only this bench (repeatable)")
    args = ap.parse_args(argv)
    shared = SharedStack()
    loader_common.stack = shared
    failed: dict[str, str] = {}
    try:
        for script, tiny in TINY.items():
            if args.only and script not in args.only:
                continue
            print(f"\n==== smoke: {script} {' '.join(tiny)}", flush=True)
            t0 = time.perf_counter()
            if (why := run(script, tiny)) is not None:
                failed[script] = why
            print(f"==== smoke: {script} {'FAILED: ' + why if why else 'ok'} in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
    finally:
        shared.close()
    for script, why in LEFT_OUT.items():
        print(f"==== smoke: {script} left out: {why}")
    if failed:
        print("benches that no longer run: " + "; ".join(f"{s} ({w})" for s, w in failed.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
