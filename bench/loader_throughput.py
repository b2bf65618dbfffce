"""Benchmark (a): loader throughput per target format and row width, against the table a user would
write by hand without lakeinlet (plain Spark read, the same five lineage columns from `_metadata` and
constants, a write of the same format), in one run on moto over s3a; medians of alternating pairs."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from unittest.mock import patch

import pyspark
from loader_common import bucket, loader_config, put_many, record, stack, timed
from pyspark.sql import functions as F
from report import Run
from wide_samples import WIDE_SCHEMA, WIDE_SCHEMA_DDL, make_wide_files

from lakeinlet import jars
from lakeinlet.dev.samples import SCHEMA_DDL, SampleFile, make_files
from lakeinlet.incremental.read import lineage as read_lineage
from lakeinlet.incremental.targets import formats_on_line
from lakeinlet.incremental.wiring import build

LINEAGE_CONSTANTS = {"_source_bucket": "land-0123abcd", "_source_key": "parquet/part-00000.parquet",
                     "_source_etag": "0123456789abcdef0123456789abcdef",
                     "_source_event_time": datetime(2026, 1, 1, tzinfo=UTC),
                     "_ingest_batch": "20260101T000000-0123456789ab"}
"""The loader's lineage columns with values of their usual length, for the plain+lineage side."""
GOALS = {"delta": 0.95, "iceberg": 0.95, "hudi": 0.9}
"""Per format, the loader's speed over the hand-written baseline's (baseline time / loader time)
to reach on the wide rows."""
GOAL_WIDTH = "wide"
SIDES: dict[str, bool | str] = {"plain": False, "baseline": "metadata"}
"""The Spark sides of a pair, by the `lineage` they pass to `plain_write`."""


@dataclass(frozen=True)
class Width:
    """One row width: its objects, their Spark schema and a tiny object of the same schema."""

    name: str
    ddl: str
    files: list[SampleFile]
    rows: int
    seed: SampleFile
    columns: int

    @property
    def mb(self) -> float:
        return sum(len(f.body) for f in self.files) / 1e6


def widths(names: list[str], n: int, narrow_rows: int, wide_rows: int) -> list[Width]:
    made = {"narrow": lambda: Width("narrow", SCHEMA_DDL, make_files("parquet", n, narrow_rows),
                                    narrow_rows, make_files("parquet", 1, 5, prefix="seed/")[0], 4),
            "wide": lambda: Width("wide", WIDE_SCHEMA_DDL, make_wide_files(n, wide_rows), wide_rows,
                                  make_wide_files(1, 5, prefix="seed/")[0], len(WIDE_SCHEMA))}
    return [made[name]() for name in names]


def with_metadata_lineage(df: Any) -> Any:
    """The loader's five lineage columns (names and types) as a user would build them by hand:
    bucket and key from `_metadata.file_path`, the event time as the file's modification time,
    the etag (not among `_metadata`'s columns) and the batch id as constants."""
    path = F.col("_metadata.file_path")
    return df.select("*", F.regexp_extract(path, r"^[a-z0-9]+://([^/]+)/", 1).alias("_source_bucket"),
                     F.regexp_extract(path, r"^[a-z0-9]+://[^/]+/(.*)$", 1).alias("_source_key"),
                     F.lit(LINEAGE_CONSTANTS["_source_etag"]).alias("_source_etag"),
                     F.col("_metadata.file_modification_time").alias("_source_event_time"),
                     F.lit(LINEAGE_CONSTANTS["_ingest_batch"]).alias("_ingest_batch"))


def plain_write(spark: Any, fmt: str, paths: list[str], lake: str, lineage: bool | str = False,
                schema: str = SCHEMA_DDL) -> float:
    """Seconds for the plain Spark read + write of the objects in `fmt` (no lakeinlet): the
    read's planning (listing the paths) is timed too, as the loader's is. `lineage`: True, the
    rows carry the loader's five lineage columns as constants; `"metadata"`, built from each
    row's `_metadata` (`with_metadata_lineage`: the hand-written baseline); each into a table
    of its own."""
    t0 = time.perf_counter()
    df = spark.read.schema(schema).parquet(*paths)
    if lineage == "metadata":
        df = with_metadata_lineage(df)
    elif lineage:
        df = df.select("*", *(F.lit(v).alias(c) for c, v in LINEAGE_CONSTANTS.items()))
    planned = time.perf_counter() - t0
    folder = {False: "plain", "metadata": "baseline"}.get(lineage, "plain_lineage")
    if fmt == "delta":
        return planned + timed(lambda: df.write.format("delta").mode("append").save(f"s3a://{lake}/{folder}"))[0]
    if fmt == "hudi":
        opts = {"hoodie.table.name": folder, "hoodie.datasource.write.operation": "insert"}
        return planned + timed(
            lambda: df.write.format("hudi").options(**opts).mode("append").save(f"s3a://{lake}/{folder}"))[0]
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lakeinlet.bench")
    name = f"{folder}_{lake.replace('-', '_')}"
    table = f"lakeinlet.bench.{name}"
    if spark.sql(f"SHOW TABLES IN lakeinlet.bench LIKE '{name}'").count():
        return planned + timed(lambda: df.writeTo(table).append())[0]
    return planned + timed(
        lambda: df.writeTo(table).tableProperty("location", f"s3a://{lake}/{folder}").create())[0]


def warm_up(spark: Any, aws: Any, fmt: str, iceberg_uri: str) -> None:
    """One small plain write and one loader batch in `fmt`, not timed: the JVM's first use of a
    format's classes would otherwise land on whichever side runs first. A second batch looks
    lineage up with the broadcast join, whose first use (class loading) would otherwise land on
    the first large batch."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    files = make_files("parquet", 4, 10, prefix="warm/")
    events = put_many(aws, landing, [(f.key, f.body) for f in files])
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=iceberg_uri), spark)
    if fmt == "iceberg":
        cast(Any, parts.target).session()
    plain_write(spark, fmt, [f"s3a://{landing}/{f.key}" for f in files], lake)
    plain_write(spark, fmt, [f"s3a://{landing}/{f.key}" for f in files], lake, "metadata")
    record(parts.changelog, events[:2])
    parts.loader().drain()
    with patch.multiple(read_lineage, MAP_LOOKUP_MAX=0, MAP_PROBE_BUDGET=0):
        record(parts.changelog, events[2:])
        parts.loader().drain()


@dataclass(frozen=True)
class Pair:
    """One pair's seconds per side, and the loader's batches."""

    plain: float
    baseline: float
    loader: float
    batches: int

    @property
    def speed(self) -> float:
        """The loader's speed over the baseline's (baseline time / loader time)."""
        return self.baseline / self.loader


def run_pair(spark: Any, aws: Any, fmt: str, width: Width, iceberg_uri: str,
             loader_first: bool = False) -> Pair:
    """One pair: the plain write, the hand-written baseline and the loader's drain of the same
    objects (fresh buckets), in the order plain, baseline, loader or its reverse; prints the
    loader's steps. Every side appends to a table that exists (made untimed by a write of one
    tiny object of the same schema), as a loader does but for its first batch."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    events = put_many(aws, landing, [(f.key, f.body) for f in [width.seed, *width.files]])
    paths = [f"s3a://{landing}/{f.key}" for f in width.files]
    spark.read.schema(width.ddl).parquet(paths[0]).count()  # JVM and s3a warm-up
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=iceberg_uri,
                                schema=width.ddl, max_files=10_000), spark)
    if fmt == "iceberg":
        cast(Any, parts.target).session()  # configures the `lakeinlet` catalog the plain writes use too
    for lineage in SIDES.values():
        plain_write(spark, fmt, [f"s3a://{landing}/{width.seed.key}"], lake, lineage, width.ddl)
    record(parts.changelog, events[:1])
    parts.loader().drain()
    reports: list[Any] = []

    def load() -> float:
        record(parts.changelog, events[1:])
        load_s, summary = timed(lambda: parts.loader().drain(progress=reports.append))
        assert summary.statuses["loaded"] == len(width.files), summary
        return load_s

    sides: dict[str, float] = {}
    for side in (["loader", *reversed(SIDES)] if loader_first else [*SIDES, "loader"]):
        sides[side] = load() if side == "loader" else plain_write(spark, fmt, paths, lake, SIDES[side],
                                                                  width.ddl)
    steps = {k: sum(r.seconds.get(k, 0.0) for r in reports) for k in ("plan", "read", "commit")}
    load_s = sides["loader"]
    first = "loader" if loader_first else "plain"
    print(f"  {fmt} {width.name} {first} first: plain {sides['plain']:.2f} s, "
          f"baseline {sides['baseline']:.2f} s, loader {load_s:.2f} s (plan {steps['plan']:.2f} s, "
          f"HEAD+read+checks {steps['read']:.2f} s, write+commit+ledger {steps['commit']:.2f} s, "
          f"other {load_s - sum(steps.values()):.2f} s)", flush=True)
    return Pair(sides["plain"], sides["baseline"], load_s, len(reports))


def fixed_cost(spark: Any, aws: Any, fmt: str, iceberg_uri: str,
               batches: int = 8) -> tuple[float, dict[str, float]]:
    """Median seconds of a plain one-object write, and of a loader batch of one tiny object with
    its parts (plan, HEAD+read+checks, commit+ledger): the loader's fixed cost per batch."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    tiny = make_files("parquet", batches, 5, prefix="tiny/")
    events = put_many(aws, landing, [(f.key, f.body) for f in tiny])
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=iceberg_uri), spark)
    if fmt == "iceberg":
        cast(Any, parts.target).session()
    plain = [plain_write(spark, fmt, [f"s3a://{landing}/{f.key}"], lake) for f in tiny[:3]]
    reports = []
    for e in events:
        record(parts.changelog, [e])
        reports.append(parts.loader().run_batch())
    steady = reports[1:]  # the first batch creates the table
    parts_s = {k: statistics.median(r.seconds.get(k, 0.0) for r in steady if r)
               for k in ("plan", "read", "commit", "total")}
    return statistics.median(plain), parts_s


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; `--formats` is checked against the formats of the running Spark line."""
    line, on_line = jars.installed_line(), formats_on_line()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer, smaller files")
    ap.add_argument("--files", type=int, default=0, help="objects per width (default 300, quick 40)")
    ap.add_argument("--rows", type=int, default=0,
                    help="rows per narrow object (4 columns; default 20000, quick 2000)")
    ap.add_argument("--wide-rows", type=int, default=0,
                    help="rows per wide object (24 columns; default 5000, quick 1000)")
    ap.add_argument("--widths", default="narrow,wide",
                    help="comma-separated row widths: narrow (the samples' 4 columns), wide (24 columns "
                         "of mixed types; the goals are measured on it) (default %(default)s)")
    ap.add_argument("--formats", default=",".join(on_line),
                    help=f"comma-separated target formats (default: those on the running Spark line, "
                         f"here {line}: %(default)s)")
    ap.add_argument("--no-fixed-cost", action="store_true", help="skip the one-object batches")
    ap.add_argument("--no-warm-pair", action="store_true",
                    help="skip the untimed full-size pair that runs first for each format and width: "
                         "the JVM compiles the hot paths over the first few full-size writes (measured: "
                         "six plain writes of 300 objects in a row took 12.2, 10.4, 9.9, 9.4, 8.0, 7.5 s), "
                         "which would land on pair 1")
    ap.add_argument("--pairs", type=int, default=3,
                    help="pairs per format and width, alternating which side runs first (medians printed)")
    ap.add_argument("--json", metavar="PATH",
                    help="also write the run's header (machine, date, load) and table, the per-format "
                         "medians and the Spark version to PATH as JSON (bench/lines.py reads it to compare "
                         "Spark lines; bench/results/ holds those the docs' performance page shows)")
    args = ap.parse_args(argv)
    if args.pairs < 1:
        ap.error(f"--pairs: expected 1 or more, found {args.pairs}")
    args.formats = args.formats.split(",")
    for fmt in args.formats:
        if fmt not in on_line:
            why = jars.NOT_ON_LINE.get((line, fmt)) or f"expected one of {', '.join(on_line)}"
            ap.error(f"--formats: {fmt!r} is not available on Spark {line}: {why}")
    args.widths = args.widths.split(",")
    if bad := [w for w in args.widths if w not in ("narrow", "wide")]:
        ap.error(f"--widths: expected narrow and/or wide, found {bad[0]!r}")
    return args


def row(fmt: str, width: Width, pairs: list[Pair], judge: bool = True) -> tuple[str, dict[str, Any]]:
    """The table's line for one format and width, and its figures for --json; `judge`: say whether
    the goal is met (the goals are for the full size: a quick run's batches are mostly fixed cost)."""
    plain, base, load = (statistics.median(getattr(p, side) for p in pairs)
                         for side in ("plain", "baseline", "loader"))
    speed = statistics.median(p.speed for p in pairs)
    goal = GOALS.get(fmt) if width.name == GOAL_WIDTH else None
    verdict = "" if goal is None else f"≥{goal:.2f} " + (
        ("met" if speed >= goal else "NOT met") if judge else "(full size)")
    if goal is not None and judge and speed < goal <= round(speed, 2):
        verdict += f" ({speed:.4f}x)"  # the two decimals of its column round it up to the goal
    text = (f"{fmt:<8} {width.name:<7} {plain:>8.2f} {base:>11.2f} {load:>9.2f} {width.mb / load:>12.2f} "
            f"{speed:>12.2f}x {load / plain:>13.2f}x  {verdict:<13} {os.getloadavg()[0]:>5.2f}   "
            + ", ".join(f"{p.speed:.2f}x" for p in pairs))
    return text, {"width": width.name, "columns": width.columns, "files": len(width.files),
                  "rows": width.rows, "mb": width.mb, "plain_s": plain, "baseline_s": base, "loader_s": load,
                  "speed_vs_baseline": speed, "goal": goal, "batches": pairs[0].batches,
                  "pair_speeds": [p.speed for p in pairs],
                  "pairs": [{"plain_s": p.plain, "baseline_s": p.baseline, "loader_s": p.loader}
                            for p in pairs]}


def main() -> None:
    """The plain write is `spark.read.parquet(...)` → Delta through delta-spark, Hudi's datasource,
    Iceberg's `writeTo().append()`; the baseline is the same with the five lineage columns built
    from `_metadata` (`with_metadata_lineage`). `--pairs` pairs a format and width (fresh objects
    and tables each), alternating which side runs first. An untimed full-size pair runs first for
    each (the JVM's compilation of the hot paths, which goes on over the first few full-size
    writes, would otherwise land on the first timed pair)."""
    args = parse_args()
    report = Run("Loader")
    n = args.files or (40 if args.quick else 300)
    narrow_rows = args.rows or (2000 if args.quick else 20000)
    wide_rows = args.wide_rows or (1000 if args.quick else 5000)
    chosen = widths(args.widths, n, narrow_rows, wide_rows)
    load_start = os.getloadavg()
    print(f"Spark {pyspark.__version__}; moto over s3a, local[2]; {args.pairs} pairs a format and width, "
          f"medians; load average at start {' '.join(f'{x:.2f}' for x in load_start)}")
    for w in chosen:
        print(f"  {w.name}: {len(w.files)} Parquet objects of {w.rows} rows x {w.columns} columns, "
              f"{w.mb:.1f} MB")
    header = (f"{'format':<8} {'width':<7} {'plain s':>8} {'baseline s':>11} {'loader s':>9} "
              f"{'loader MB/s':>12} {'speed vs base':>13} {'loader/plain':>14}  {'goal':<13} {'load':>5}   "
              "pairs (speed vs baseline)")
    lines: list[str] = []
    results: dict[str, dict[str, Any]] = {}
    with stack(every=True) as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        uri = f"jdbc:sqlite:{tmp}/catalog.db"
        for fmt in args.formats:
            warm_up(spark, aws, fmt, uri)
            for w in chosen:
                if not args.no_warm_pair:
                    print("  (a warm-up pair, not counted:)")
                    run_pair(spark, aws, fmt, w, uri, loader_first=True)
                pairs = [run_pair(spark, aws, fmt, w, uri, loader_first=i % 2 == 1)
                         for i in range(args.pairs)]
                text, figures = row(fmt, w, pairs, judge=not args.quick)
                lines.append(text)
                print(header + "\n" + text, flush=True)
                report.row(f"{fmt}, {w.name}: {len(w.files)} Parquet objects ({w.columns} columns, "
                           f"{w.rows:,} rows each, {w.mb:.1f} MB), one batch appended "
                           f"(medians of {len(pairs)} pair(s))",
                           f"loader {figures['loader_s']:.2f} s ({w.mb / figures['loader_s']:.1f} MB/s)",
                           f"hand-written {figures['baseline_s']:.2f} s; plain {figures['plain_s']:.2f} s",
                           f"{figures['speed_vs_baseline']:.2f}x the hand-written table's speed, "
                           f"{figures['plain_s'] / figures['loader_s']:.2f}x the plain write's")
                entry = results.setdefault(fmt, {"format": fmt, "widths": {}})
                entry["widths"][w.name] = figures
                entry |= {k: figures[k] for k in ("plain_s", "baseline_s", "loader_s", "speed_vs_baseline",
                                                  "batches", "pair_speeds")}
        load_end = os.getloadavg()
        print("\nplain: spark.read → write; baseline: the same with the five lineage columns from _metadata "
              "(hand-written); speed vs base: median of the pairs' baseline time / loader time")
        print(header + "\n" + "\n".join(lines))
        print(f"load average at start {' '.join(f'{x:.2f}' for x in load_start)}, "
              f"at end {' '.join(f'{x:.2f}' for x in load_end)}")
        if not args.no_fixed_cost:
            print("\nfixed cost per batch (one tiny object a batch, median of 7 after the first):")
            print(f"{'format':<8} {'plain write s':>14} {'batch s':>8} {'plan s':>7} {'read s':>7} "
                  f"{'commit+ledger s':>16}")
            for fmt in args.formats:
                plain, s = fixed_cost(spark, aws, fmt, uri)
                print(f"{fmt:<8} {plain:>14.2f} {s['total']:>8.2f} {s['plan']:>7.2f} {s['read']:>7.2f} "
                      f"{s['total'] - s['plan'] - s['read']:>16.2f}")
                results[fmt]["fixed_cost"] = {"plain_write_s": plain, "batch_s": s["total"],
                                              "plan_s": s["plan"], "read_s": s["read"],
                                              "commit_ledger_s": s["total"] - s["plan"] - s["read"]}
        version = spark.version
    if args.json:
        main_width = chosen[-1]  # the top-level figures (bench/lines.py) are the last width's
        out = report.document() | {
               "spark": version, "line": jars.line_of(version), "files": n,
               "rows_per_object": main_width.rows,
               "mb": main_width.mb, "width": main_width.name, "pairs": args.pairs,
               "warm_pair": not args.no_warm_pair, "load_average_start": load_start[0],
               "load_average_end": load_end[0], "formats": list(results.values())}
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
