"""Benchmark: a MERGE of a batch of DMS-shaped changes (updates, inserts, deletes) into a table of N rows,
by lakeinlet's loader (--merge-key id --order-by ts --delete-when "Op = 'D'") against the same MERGE
written by hand in Spark on a copy of the table, interleaved in one run; per format, both tables'
row counts and checksums are compared after every batch."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from dataclasses import dataclass, replace
from typing import Any, cast

import pyspark
from _dms import COLUMNS, SCHEMA, Source
from _merge_sides import Hand, checksum, profiled
from loader_common import bucket, loader_config, put_many, record, stack, timed
from report import Run, add_json_flag

from lakeinlet.incremental.merge_settings import MergeSection
from lakeinlet.incremental.targets import formats_on_line
from lakeinlet.incremental.wiring import build

MERGE = MergeSection(merge_key=("id",), order_by="ts", delete_when="Op = 'D'")


@dataclass(frozen=True)
class Round:
    """One batch of changes merged by both sides: seconds each, and the tables after it."""

    loader: float
    hand: float
    rows: int
    equal: bool
    steps: dict[str, float]

    @property
    def ratio(self) -> float:
        """hand / lakeinlet: 1.0 or more, lakeinlet is as fast."""
        return self.hand / self.loader


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a smaller table (rows 100000, changes 10000)")
    ap.add_argument("--rows", type=int, default=0, help="rows of the table (default 1000000)")
    ap.add_argument("--changes", type=int, default=10_000, help="changes per batch (default %(default)s)")
    ap.add_argument("--load-objects", type=int, default=10, help="CSV objects of the full load")
    ap.add_argument("--change-objects", type=int, default=10, help="CSV objects per batch of changes")
    ap.add_argument("--repeat", type=int, default=5,
                    help="batches merged by each side, alternating which runs first (medians printed)")
    ap.add_argument("--formats", default=",".join(formats_on_line()), help="comma-separated target formats")
    ap.add_argument("--warm", type=int, default=1,
                    help="batches merged by both sides first, not counted: the JVM's first MERGE of a "
                         "format (class loading, compilation) would otherwise land on the first batch")
    add_json_flag(ap)
    args = ap.parse_args(argv)
    args.rows = args.rows or (100_000 if args.quick else 1_000_000)
    args.formats = [f for f in args.formats.split(",") if f]
    if bad := [f for f in args.formats if f not in formats_on_line()]:
        ap.error(f"--formats: {bad[0]!r} is not available here (expected {', '.join(formats_on_line())})")
    return args


def run_format(spark: Any, aws: Any, fmt: str, args: argparse.Namespace, uri: str) -> list[Round]:
    """The table built once by the loader (the full load), copied for the hand-written job; then
    `--repeat` batches of changes, each merged by both sides and their tables compared."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    source = Source()
    config = loader_config(aws, lake, "orders", fmt="csv", target=fmt, iceberg_uri=uri, schema=SCHEMA,
                           max_files=10_000)
    config = replace(config, merge=MERGE, read=replace(config.read, read_option=("header=true",)))
    parts = build(config, spark)
    if fmt == "iceberg":
        cast(Any, parts.target).session()  # the `lakeinlet` catalog the hand side's copy uses too
    load = put_many(aws, landing, source.full_load(args.rows, args.load_objects, "dms/orders/"))
    record(parts.changelog, load)
    built_s, _ = timed(lambda: parts.loader().drain())
    hand = Hand.of(fmt, spark, aws, lake, parts)
    copy_s, _ = timed(hand.copy)
    print(f"  {fmt}: table of {args.rows:,} rows built by the loader in {built_s:.1f} s, copied for the "
          f"hand-written job in {copy_s:.1f} s", flush=True)
    rounds = []
    for i in range(-args.warm, args.repeat):
        items = source.changes(args.changes, args.change_objects, f"dms/orders/cdc-{i + args.warm:03d}-")
        events = put_many(aws, landing, items)
        paths = [f"s3a://{landing}/{key}" for key, _ in items]
        r = merge_round(spark, parts, hand, events, paths, hand_first=i % 2 == 1, expected=len(source.live))
        rounds += [r] if i >= 0 else []
        print(f"  {fmt} batch {i + 1}{' (warm-up, not counted)' if i < 0 else ''} "
              f"({'hand' if i % 2 else 'lakeinlet'} first): lakeinlet {r.loader:.2f} s, "
              f"hand {r.hand:.2f} s, ratio {r.ratio:.2f}; {r.rows:,} rows, "
              f"{'equal' if r.equal else 'DIFFERENT'}; lakeinlet steps "
              + ", ".join(f"{k} {v:.2f} s" for k, v in r.steps.items()), flush=True)
    return rounds


def merge_round(spark: Any, parts: Any, hand: Hand, events: list[Any], paths: list[str],
                hand_first: bool, expected: int) -> Round:
    """One batch merged by both sides (in either order), then both tables counted and summed."""
    steps: dict[str, float] = {}

    def loader_side() -> float:
        record(parts.changelog, events)
        reports: list[Any] = []
        with profiled(steps):
            seconds, summary = timed(lambda: parts.loader().drain(progress=reports.append))
        assert summary.statuses.get("loaded") == len(events), summary
        for k in ("plan", "read", "commit"):  # the loader's own steps: commit holds the merge's
            steps[k] = sum(r.seconds.get(k, 0.0) for r in reports)
        return seconds

    sides = {}
    for side in (["hand", "loader"] if hand_first else ["loader", "hand"]):
        sides[side] = timed(lambda: hand.merge(paths))[0] if side == "hand" else loader_side()
    mine, theirs = checksum(hand.loader_table()), checksum(hand.table())
    if mine[0] != expected:
        raise AssertionError(f"lakeinlet's table holds {mine[0]} rows, the source {expected}")
    return Round(sides["loader"], sides["hand"], mine[0], mine == theirs, steps)


def summary_line(fmt: str, args: argparse.Namespace, rounds: list[Round]) -> tuple[str, dict[str, Any]]:
    loader = statistics.median(r.loader for r in rounds)
    hand = statistics.median(r.hand for r in rounds)
    ratio = statistics.median(r.ratio for r in rounds)
    equal = all(r.equal for r in rounds)
    text = (f"{fmt:<8} {args.rows:>10,} {args.changes:>8,} {loader:>11.2f} {args.changes / loader:>12,.0f} "
            f"{hand:>7.2f} {args.changes / hand:>10,.0f} {ratio:>6.2f}x  {'yes' if equal else 'NO':<6} "
            f"{os.getloadavg()[0]:>5.2f}   " + ", ".join(f"{r.ratio:.2f}x" for r in rounds))
    steps = {k: statistics.median(r.steps.get(k, 0.0) for r in rounds) for k in rounds[0].steps}
    return text, {"rows": args.rows, "changes": args.changes, "loader_s": loader, "hand_s": hand,
                  "hand_over_lakeinlet": ratio, "equal": equal, "steps": steps,
                  "rounds": [{"loader_s": r.loader, "hand_s": r.hand, "rows": r.rows} for r in rounds]}


def steps_note(figures: dict[str, dict[str, Any]]) -> str:
    """Where lakeinlet's merge time went per format (medians of the batches' steps): the loader's
    plan, read (HEAD, read, checks) and commit; within Delta's commit, the changes (the null-key
    count and the newest change per key), the key semi-join that finds the files to rewrite, and the
    rewrite (the merged rows written)."""
    parts = []
    for what, f in figures.items():
        steps = f.get("steps", {})
        text = ", ".join(f"{k} {steps[k]:.2f} s" for k in ("plan", "read", "commit") if k in steps)
        inner = ", ".join(f"{k} {v:.2f} s" for k, v in steps.items() if k not in ("plan", "read", "commit"))
        inner = f" (in it {inner})" if inner else ""
        parts.append(f"{what.split(':')[0]} {f['loader_s']:.2f} s: {text}{inner}")
    if not parts:
        return ""
    batches = "; ".join(f"{what.split(':')[0]} " + ", ".join(f"{r['hand_s'] / r['loader_s']:.2f}x"
                                                              for r in f["rounds"])
                        for what, f in figures.items())
    return (f"Where lakeinlet's merge time goes (medians): {'; '.join(parts)}. "
            f"Batches (hand / lakeinlet): {batches}.")


def _loads(avg: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in avg)


HEADER = (f"{'format':<8} {'table rows':>10} {'changes':>8} {'lakeinlet s':>11} {'changes/s':>12} "
          f"{'hand s':>7} {'changes/s':>10} {'ratio':>7}  {'equal':<6} {'load':>5}   "
          "batches (hand / lakeinlet)")


def main(argv: list[str] | None = None) -> None:
    """Per format: the loader builds the table from a DMS full load, the hand-written job gets a copy;
    each batch of changes is merged by both (alternating which goes first), then both tables'
    counts and checksums (of Op, ts, id, name, amount) are compared."""
    args = parse_args(argv)
    report = Run("MERGE")
    start = os.getloadavg()
    print(f"Spark {pyspark.__version__}; moto over s3a, local[2]; a table of {args.rows:,} rows, batches of "
          f"{args.changes:,} changes in {args.change_objects} DMS CSV objects, {args.repeat} per format; "
          f"load average at start {_loads(start)}", flush=True)
    lines = []
    with stack(every=True) as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats:
            text, figures = summary_line(fmt, args, run_format(spark, aws, fmt, args,
                                                               f"jdbc:sqlite:{tmp}/catalog.db"))
            lines.append(text)
            print(HEADER + "\n" + text, flush=True)
            report.row(f"{fmt}: {args.changes:,} changes ({', '.join(COLUMNS)}; updates, inserts, deletes) "
                       f"merged into {args.rows:,} rows (medians of {args.repeat})",
                       f"lakeinlet {figures['loader_s']:.2f} s ({args.changes / figures['loader_s']:,.0f} "
                       "changes/s)",
                       f"hand-written MERGE {figures['hand_s']:.2f} s",
                       f"{figures['hand_over_lakeinlet']:.2f}x (hand / lakeinlet)"
                       + ("" if figures["equal"] else "; the tables DIFFER"), **figures)
    end = os.getloadavg()
    print("\nratio: hand-written seconds / lakeinlet seconds (1.0 or more: lakeinlet is as fast); equal: "
          "both tables' row count and checksum match after every batch")
    print(HEADER + "\n" + "\n".join(lines))
    print(f"load average at start {_loads(start)}, at end {_loads(end)}")
    if note := steps_note(report.figures):
        print(note)
        report.note(note)
    report.write(args.json)


if __name__ == "__main__":
    main()
