"""Benchmark: an hour of `--continuous` loading at a 5-second interval, compressed (720 batches of
10 small objects by default), into one table per side in the same run: without file sizing (a file
per Spark task), with `--target-file-mb`, and each of them after `maintain`. Prints the live files,
files per 128 MiB, and a full-scan time by the format's own reader, with ratios against the side
without sizing; the issue's goals (≤ 1 file per 128 MiB after maintenance, a full scan ≥ 5x faster)
are printed beside them, never asserted."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from loader_common import bucket, loader_config, put_many, record, stack, timed  # noqa: E402
from report import Run, add_json_flag  # noqa: E402

from lakeinlet.changelog.reader import DeltaChangelog  # noqa: E402
from lakeinlet.dev.samples import make_files  # noqa: E402
from lakeinlet.incremental.wiring import Parts, build  # noqa: E402

MIB = 1024 * 1024
GOAL_FILES_PER_128, GOAL_SCAN = 1.0, 5.0
UNSIZED = 1
"""The file size given to the side without sizing: every Spark task's output stays its own file
(the layout before --target-file-mb)."""


@dataclass
class Side:
    name: str
    load_s: float = 0.0
    maintain_s: float = 0.0
    files: int = 0
    bytes: int = 0
    scan_s: float = 0.0
    rows: int = 0
    detail: str = ""

    @property
    def per_128(self) -> float:
        return self.files / max(self.bytes / (128 * MIB), 1.0)


def live(parts: Parts) -> tuple[int, int]:
    """The table's live data files and bytes (a dry-run compaction reports them, for every format)."""
    c = parts.target.compact(parts.config.tables.target_file_bytes, 168.0, True)
    return c.files_before, c.bytes_before


def scan(parts: Parts, repeat: int) -> tuple[float, int]:
    """Median seconds of a full scan by the format's own reader (delta-rs, pyiceberg, hudi-rs)."""
    times, rows = [], 0
    for _ in range(repeat):
        t, table = timed(parts.target.rows)
        times.append(t)
        rows = table.num_rows
    return statistics.median(times), rows


def measure(side: Side, parts: Parts, repeat: int) -> Side:
    side.files, side.bytes = live(parts)
    side.scan_s, side.rows = scan(parts, repeat)
    return side


def load(spark: Any, config: Any, file_bytes: int) -> tuple[Parts, float, int]:
    parts = build(config, spark)
    cast(Any, parts.target).file_bytes = file_bytes
    t0, done = time.perf_counter(), 0
    loader = parts.loader()

    def progress(_: Any) -> None:
        nonlocal done
        done += 1
        if done % 60 == 0:
            print(f"    {done} batches, {time.perf_counter() - t0:.0f} s", flush=True)

    summary = loader.drain(progress=progress)
    assert summary.batches > 0, "nothing loaded"
    return parts, time.perf_counter() - t0, summary.batches


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="60 batches instead of 720")
    ap.add_argument("--batches", type=int, default=0, help="batches per side (default 720; --quick: 60)")
    ap.add_argument("--objects", type=int, default=10, help="objects per batch (default 10)")
    ap.add_argument("--rows", type=int, default=200, help="rows per object (default 200)")
    ap.add_argument("--format", default="delta", choices=("delta", "iceberg", "hudi"))
    ap.add_argument("--repeat", type=int, default=3, help="full scans per table, median printed")
    add_json_flag(ap)
    args = ap.parse_args(argv)
    args.batches = args.batches or (60 if args.quick else 720)
    return args


def main() -> None:
    args = parse_args()
    report = Run("Loader")
    n = args.batches * args.objects
    files = make_files("parquet", n, args.rows)
    mb = sum(len(f.body) for f in files) / 1e6
    print(f"{args.format}: {args.batches} batches x {args.objects} parquet objects x {args.rows} rows "
          f"({n} objects, {mb:.1f} MB); moto over s3a, local[2]; load average {os.getloadavg()[0]:.2f} "
          f"({os.cpu_count()} cpus)")
    sides: list[Side] = []
    with stack(every=args.format != "delta") as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        landing, lake = bucket(aws, "landing"), bucket(aws, "lake")
        events = put_many(aws, landing, [(f.key, f.body) for f in files])
        changelog = DeltaChangelog(f"s3://{lake}/changelog", aws)
        per_commit = args.objects * 10  # the poller commits several loader batches' events at once
        for i in range(0, n, per_commit):
            record(changelog, events[i:i + per_commit])
        catalog = f"jdbc:sqlite:{tmp}/catalog.db"
        warm = build(loader_config(aws, lake, "warm_up", target=args.format, iceberg_uri=catalog,
                                   max_files=args.objects), spark)
        print("  warm-up: 5 batches into a scratch table, not counted", flush=True)
        warm.loader().drain(max_batches=5)  # the JVM compiles the hot paths over the first batches
        for name, file_bytes in (("without sizing", UNSIZED), ("--target-file-mb 128", 128 * MIB)):
            config = loader_config(aws, lake, _slug(name), target=args.format, iceberg_uri=catalog,
                                   max_files=args.objects)
            print(f"  loading {name} ...", flush=True)
            parts, load_s, batches = load(spark, config, file_bytes)
            before = measure(Side(name, load_s), parts, args.repeat)
            print(f"  {name}: {batches} batches in {load_s:.1f} s; maintaining ...", flush=True)
            t0 = time.perf_counter()
            c = parts.target.compact(128 * MIB, 168.0, False)
            t = time.perf_counter() - t0
            after = measure(Side(f"{name} + maintain", load_s, t, detail=c.detail), parts, args.repeat)
            sides += [before, after]
    base = sides[0]
    print(f"\n{'side':<32} {'load s':>7} {'maintain s':>10} {'files':>6} {'MiB':>7} {'files/128MiB':>12} "
          f"{'rows':>8} {'scan s':>7} {'scan speed-up':>13}")
    for s in sides:
        print(f"{s.name:<32} {s.load_s:>7.1f} {s.maintain_s:>10.1f} {s.files:>6} {s.bytes / MIB:>7.1f} "
              f"{s.per_128:>12.2f} {s.rows:>8} {s.scan_s:>7.3f} {base.scan_s / s.scan_s:>12.1f}x")
    final = sides[-1]
    print(f"\ngoal: <= {GOAL_FILES_PER_128:g} file per 128 MiB after maintenance: {final.per_128:.2f} "
          f"({'met' if final.per_128 <= GOAL_FILES_PER_128 else 'NOT met'}); full scan >= {GOAL_SCAN:g}x "
          f"faster than without sizing: {base.scan_s / final.scan_s:.1f}x "
          f"({'met' if base.scan_s / final.scan_s >= GOAL_SCAN else 'NOT met'}); "
          f"sizing alone loads {base.load_s / sides[2].load_s:.2f}x as fast; load average "
          f"{os.getloadavg()[0]:.2f}")
    if any(s.rows != base.rows for s in sides):
        print("ROWS DIFFER between sides: " + ", ".join(f"{s.name}={s.rows}" for s in sides))
    unsized, unsized_m, sized, sized_m = sides

    def scans(before: Side, after: Side) -> str:
        return (f"{before.files:,} files, {before.bytes / MIB:.1f} MiB, full scan {before.scan_s:.2f} s; "
                f"after `maintain` ({after.maintain_s:.1f} s): {after.files:,} file(s), "
                f"full scan {after.scan_s:.2f} s")
    report.row(f"{args.batches} batches × {args.objects} Parquet objects × {args.rows} rows into "
               f"{args.format}", f"`--target-file-mb 128`: {scans(sized, sized_m)}",
               f"without sizing: {scans(unsized, unsized_m)}",
               f"scans: sizing alone {base.scan_s / sized.scan_s:.1f}x faster, sizing + `maintain` "
               f"{base.scan_s / sized_m.scan_s:.1f}x; loading with sizing "
               f"{base.load_s / sized.load_s:.2f}x as fast", sides=[vars(s) for s in sides])
    report.write(args.json)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).strip("_")


if __name__ == "__main__":
    main()
