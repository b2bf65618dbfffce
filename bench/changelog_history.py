"""Benchmark: months of changelog history (1,000,000 events in 5,000 commits; --quick: 100,000 in
500): the loader's planning read of the newest versions against the same read of a 10-commit
changelog, and the size on storage before and after `lakeinlet-poll maintain`. Figures, not asserted."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from report import Run, add_json_flag

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.blind_append import DeltaAppender, LogState
from lakeinlet.changelog.log_store import LocalStore
from lakeinlet.changelog.maintain import storage
from lakeinlet.changelog.reader import TABLE_PROPERTIES, DeltaChangelog, changelog_table
from lakeinlet.changelog.schema import CHANGELOG_PARTITION_BY
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.changelog_reader import ChangelogReader
from lakeinlet.incremental.model import START, Position
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.sources.job import main as poll_main

TAIL = 10
"""Versions after the loader's checkpoint: a loader that keeps up reads a few at a time."""


def template(per_commit: int) -> pa.Table:
    now = datetime.now(UTC)
    rows = [ReceivedEvent(ObjectEvent("b", f"k/{i}", "ObjectCreated:Put", now, 100, f"e{i}"), f"m{i}",
                          now, "p") for i in range(per_commit)]
    return changelog_table(rows)


def commit_table(base: pa.Table, v: int) -> pa.Table:
    """The template with this commit's ids, keys and batch (other columns as they are)."""
    n = base.num_rows
    for name, values in (("event_id", [f"e{v}-{i}" for i in range(n)]),
                         ("key", [f"k/{v}/{i}" for i in range(n)]),
                         ("message_id", [f"m{v}-{i}" for i in range(n)]), ("poll_batch", [f"p{v}"] * n)):
        i = base.schema.get_field_index(name)
        base = base.set_column(i, base.schema.field(i), pa.array(values, base.schema.field(i).type))
    return base


def build(uri: str, commits: int, per_commit: int, start: int = 0) -> None:
    """`commits` more commits: delta-rs creates the table, blind appends follow, with a log
    checkpoint every 100 versions, as the poller's writer does."""
    base = template(per_commit)
    dt = DeltaTable(uri) if start else None
    if dt is None:
        write_deltalake(uri, commit_table(base, 0), mode="append", partition_by=CHANGELOG_PARTITION_BY,
                        configuration=TABLE_PROPERTIES)
        start, commits = 1, commits - 1
    version = int(DeltaTable(uri).version())
    appender = DeltaAppender(LocalStore(uri), LogState(version),
                             lambda: LogState(int(DeltaTable(uri).version())))
    for v in range(start, start + commits):
        version = appender.append(commit_table(base, v), {"poll_batch": f"p{v}"})
        if version % 100 == 0:
            DeltaTable(uri, version=version).create_checkpoint()


def planning_read(uri: str, after: int, repeats: int = 5) -> tuple[float, int]:
    """Median seconds of the loader's read of the versions after `after`, and the rows read."""
    times, rows = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        got, _ = ChangelogReader(DeltaChangelog(uri)).rows_after(Position(after), 10_000_000)
        times.append(time.perf_counter() - t0)
        rows = len(got)
    return statistics.median(times), rows


def running_read(uri: str, start: int, repeats: int = 5) -> tuple[float, int]:
    """Median seconds of the read a running loader (`--continuous`: one reader, the changelog
    kept open) makes of the next TAIL versions, after TAIL more commits arrive each time."""
    reader = ChangelogReader(DeltaChangelog(uri))
    after = int(DeltaTable(uri).version())
    reader.rows_after(Position(after), 10_000_000)  # the first batch opens the table
    times, rows = [], 0
    for r in range(repeats):
        build(uri, TAIL, 200, start=start + r * TAIL)
        t0 = time.perf_counter()
        got, _ = reader.rows_after(Position(after), 10_000_000)
        times.append(time.perf_counter() - t0)
        rows, after = len(got), after + TAIL
    return statistics.median(times), rows


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def log_files(uri: str) -> int:
    return sum(1 for _ in (Path(uri) / "_delta_log").iterdir())


def report_size(label: str, uri: str) -> tuple[int, int]:
    """Print the table's data files and bytes; returns them."""
    use = storage(uri, AwsSection())
    print(f"{label:<34} {use.files:>7} data files {use.bytes / 1e6:>9.1f} MB, {log_files(uri)} log files")
    return use.files, use.bytes


def main() -> None:
    """The changelog is built locally with the poller's blind-append writer and its log checkpoint
    every 100 versions; the read of the newest 10 versions after the checkpoint is timed in a
    loader's first batch and in a running loader's later batches with 10 new versions each."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100,000 events in 500 commits")
    parser.add_argument("--commits", type=int, default=0, help="changelog commits (overrides --quick)")
    parser.add_argument("--per-commit", type=int, default=200, help="events per commit (default 200)")
    add_json_flag(parser)
    args = parser.parse_args()
    report = Run("Event source")
    commits, per_commit = args.commits or (500 if args.quick else 5000), args.per_commit
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        long, short = f"{tmp}/changelog", f"{tmp}/short"
        secs = timed(lambda: build(long, commits, per_commit))
        build(short, TAIL, per_commit)
        head = int(DeltaTable(long).version())
        print(f"built {commits * per_commit:,} events in {commits} commits in {secs:.1f} s (head {head})")
        before = report_size("changelog on storage", long)
        t_long, n_long = planning_read(long, head - TAIL)
        t_short, n_short = planning_read(short, -1)
        print(f"planning read, {TAIL} versions after the checkpoint: {commits} commits "
              f"{t_long * 1000:.0f} ms "
              f"({n_long} rows), {TAIL} commits {t_short * 1000:.0f} ms ({n_short} rows): "
              f"ratio {t_long / t_short:.2f}x (goal <= 1.5x) - a loader's first batch (table opened)")
        w_long, n_long = running_read(long, 10 * commits)
        w_short, n_short = running_read(short, 10 * commits)
        print(f"same read in a running loader (changelog kept open, {TAIL} new versions a batch): "
              f"{commits} commits {w_long * 1000:.0f} ms ({n_long} rows), {TAIL} commits "
              f"{w_short * 1000:.0f} ms ({n_short} rows): ratio {w_long / w_short:.2f}x (goal <= 1.5x)")
        loader = f"{tmp}/target"
        target = DeltaTarget(loader, AwsSection(), "lakeinlet-loader")
        head = int(DeltaTable(long).version())  # the running reads added versions
        target.commit_position(None, Position(head), "bench", START)
        out = io.StringIO()
        argv = ["maintain", "--changelog", long, "--loader-table", loader, "--retention-hours", "0"]
        codes: list[int] = []
        with contextlib.redirect_stdout(out):
            secs = timed(lambda: codes.append(poll_main(argv)))
        code = codes[0]
        print(f"lakeinlet-poll maintain (loader at the head, --retention-hours 0): {secs:.1f} s, exit {code}")
        print("  " + out.getvalue().strip().replace("\n", "\n  "))
        compacted = report_size("changelog on storage after", long)
        after = int(DeltaTable(long).version())
        build(long, TAIL, per_commit, start=commits + 1)
        t_after, n_after = planning_read(long, after)
        print(f"planning read after maintain, {TAIL} new versions: {t_after * 1000:.0f} ms ({n_after} rows): "
              f"ratio {t_after / t_short:.2f}x to the {TAIL}-commit changelog")
    print(f"load average at end: {os.getloadavg()}")
    report.row(f"months of history ({commits * per_commit:,} events in {commits:,} commits)",
               f"newest {TAIL} versions read: {t_long * 1000:.0f} ms in a loader's first batch, "
               f"{w_long * 1000:.0f} ms in a running loader; changelog {before[0]:,} files, "
               f"{before[1] / 1e6:.1f} MB → {compacted[0]:,} files, {compacted[1] / 1e6:.1f} MB after "
               f"`lakeinlet-poll maintain` ({secs:.1f} s)",
               f"same reads of a {TAIL}-commit changelog: {t_short * 1000:.0f} ms, {w_short * 1000:.0f} ms",
               f"{t_long / t_short:.2f}x, {w_long / w_short:.2f}x", first_batch_s=t_long, running_s=w_long,
               short_first_batch_s=t_short, short_running_s=w_short, maintain_s=secs)
    report.write(args.json)


if __name__ == "__main__":
    main()
