"""Benchmark (b): cost of reading the changelog from the checkpoint when it holds 10 vs 1,000
commits (the checkpoint just before the newest commit, as in steady state), read over the S3 API
from moto (each changelog built on local disk, then uploaded)."""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loader_common import bucket, stack
from report import Run, add_json_flag

from lakeinlet.aws import client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.changelog_reader import ChangelogReader
from lakeinlet.incremental.model import Position


def build(changelog: DeltaChangelog, commits: int, per_commit: int) -> None:
    for v in range(commits):
        now = datetime.now(UTC)
        rows = [ReceivedEvent(ObjectEvent("b", f"k/{v}/{i}", "ObjectCreated:Put", now, 100, f"e{v}-{i}"),
                              f"m{v}-{i}", now, f"p{v}") for i in range(per_commit)]
        changelog.append(rows, {"poll_batch": f"p{v}"})


def copy_to_s3(local: Path, s3: Any, bucket_name: str, prefix: str) -> None:
    """Upload a changelog built locally: building its commits straight on moto is far slower."""
    files = [p for p in local.rglob("*") if p.is_file()]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: s3.put_object(Bucket=bucket_name, Key=f"{prefix}/{p.relative_to(local)}",
                                              Body=p.read_bytes()), files))


def measure(changelog: DeltaChangelog, repeats: int) -> tuple[float, float, int]:
    """Median seconds of (head + rows after the checkpoint) and of `commits(after)` alone."""
    reader, head = ChangelogReader(changelog), changelog.head_version()
    reads, hist, n = [], [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        rows, _ = reader.rows_after(Position(head - 1), 1000)
        reads.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        changelog.commits(after=head - 1)
        hist.append(time.perf_counter() - t0)
        n = len(rows)
    return statistics.median(reads), statistics.median(hist), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="10 vs 200 commits")
    ap.add_argument("--per-commit", type=int, default=20, help="events per changelog commit")
    ap.add_argument("--sizes", default="", help="comma list of changelog commit counts (overrides --quick)")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) or ((10, 200) if args.quick else (10, 1000))
    with stack() as (_, aws, _spark):
        results = {}
        for n in sizes:
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                build(DeltaChangelog(f"{tmp}/changelog"), n, args.per_commit)
                name = bucket(aws, "cl")
                copy_to_s3(Path(tmp) / "changelog", client("s3", aws, max_pool_connections=16), name,
                           "changelog")
            cl = DeltaChangelog(f"s3://{name}/changelog", aws)
            built = time.perf_counter() - t0
            results[n] = measure(cl, 5)
            print(f"{n:5d} commits (built in {built:.1f} s): "
                  f"read from checkpoint {results[n][0] * 1000:.0f} ms "
                  f"({results[n][2]} rows), commit history after checkpoint {results[n][1] * 1000:.0f} ms")
        small, big = sizes
        print(f"ratio {big} vs {small} commits: read {results[big][0] / results[small][0]:.2f}x, "
              f"history {results[big][1] / results[small][1]:.2f}x")
        report.row(f"the loader's changelog read from the checkpoint, {big:,} commits of "
                   f"{args.per_commit} events (medians of 5, over the S3 API on moto)",
                   f"{results[big][0] * 1000:.0f} ms (commit history {results[big][1] * 1000:.0f} ms)",
                   f"the same read of {small:,} commits: {results[small][0] * 1000:.0f} ms "
                   f"(history {results[small][1] * 1000:.0f} ms)",
                   f"{results[big][0] / results[small][0]:.2f}x, "
                   f"history {results[big][1] / results[small][1]:.2f}x",
                   seconds={n: r[:2] for n, r in results.items()})
    report.write(args.json)


if __name__ == "__main__":
    main()
