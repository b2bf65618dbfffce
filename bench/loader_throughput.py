"""Benchmark (a): loader throughput (files/s, MB/s) per target format, beside a plain Spark write
of the same objects into the same format and the same write with the lineage columns as constants,
in the same run on moto over s3a; medians of alternating pairs."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pyspark
from loader_common import bucket, loader_config, put_many, record, stack, timed
from pyspark.sql import functions as F

from lakeinlet import jars
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.read import reader as spark_reader
from lakeinlet.incremental.targets import formats_on_line
from lakeinlet.incremental.wiring import build

LINEAGE_CONSTANTS = {"_source_bucket": "land-0123abcd", "_source_key": "parquet/part-00000.parquet",
                     "_source_etag": "0123456789abcdef0123456789abcdef",
                     "_source_event_time": datetime(2026, 1, 1, tzinfo=UTC),
                     "_ingest_batch": "20260101T000000-0123456789ab"}
"""The loader's lineage columns with values of their usual length, for the plain+lineage side."""


def plain_write(spark: Any, fmt: str, paths: list[str], lake: str, lineage: bool = False) -> float:
    """Seconds for the plain Spark read + write of the objects in `fmt` (no lakeinlet): the
    read's planning (listing the paths) is timed too, as the loader's is. `lineage`: the rows
    carry the loader's five lineage columns as constants (into a table of its own), to show what
    writing them costs apart from looking them up and checking."""
    t0 = time.perf_counter()
    df = spark.read.schema(SCHEMA_DDL).parquet(*paths)
    if lineage:
        df = df.select("*", *(F.lit(v).alias(c) for c, v in LINEAGE_CONSTANTS.items()))
    planned = time.perf_counter() - t0
    folder = "plain_lineage" if lineage else "plain"
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
        parts.target.session()
    plain_write(spark, fmt, [f"s3a://{landing}/{f.key}" for f in files], lake)
    record(parts.changelog, events[:2])
    parts.loader().drain()
    with patch.multiple(spark_reader, MAP_LOOKUP_MAX=0, MAP_PROBE_BUDGET=0):
        record(parts.changelog, events[2:])
        parts.loader().drain()


def run_format(spark: Any, aws: Any, fmt: str, files: list[Any], iceberg_uri: str,
               loader_first: bool = False) -> tuple[float, float, int, float]:
    """One pair: the plain write and the loader's drain of the same objects (fresh buckets), in
    the order asked; prints the loader's steps. Both sides append to a table that exists (made
    untimed by a write of one tiny object), as a loader does but for its first batch. Returns
    (plain s, loader s, loader batches, plain+lineage s)."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    seed = make_files("parquet", 1, 5, prefix="seed/")
    events = put_many(aws, landing, [(f.key, f.body) for f in [*seed, *files]])
    paths = [f"s3a://{landing}/{f.key}" for f in files]
    spark.read.schema(SCHEMA_DDL).parquet(paths[0]).count()  # JVM and s3a warm-up
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=iceberg_uri,
                                max_files=10_000), spark)
    if fmt == "iceberg":
        parts.target.session()  # configures the `lakeinlet` catalog the plain write uses too
    for lineage in (False, True):
        plain_write(spark, fmt, [f"s3a://{landing}/{seed[0].key}"], lake, lineage)
    record(parts.changelog, events[:1])
    parts.loader().drain()
    events = events[1:]
    reports: list[Any] = []

    def load() -> float:
        record(parts.changelog, events)
        load_s, summary = timed(lambda: parts.loader().drain(progress=reports.append))
        assert summary.statuses["loaded"] == len(files), summary
        return load_s

    load_s = load() if loader_first else 0.0
    base_s = plain_write(spark, fmt, paths, lake)
    lineage_s = plain_write(spark, fmt, paths, lake, lineage=True)
    load_s = load_s or load()
    steps = {k: sum(r.seconds.get(k, 0.0) for r in reports) for k in ("plan", "read", "commit")}
    print(f"  {fmt} {'loader' if loader_first else 'plain'} first: plain {base_s:.2f} s, plain+lineage "
          f"{lineage_s:.2f} s, loader "
          f"{load_s:.2f} s (plan {steps['plan']:.2f} s, HEAD+read+checks {steps['read']:.2f} s, "
          f"commit+ledger {steps['commit']:.2f} s, other {load_s - sum(steps.values()):.2f} s)")
    return base_s, load_s, len(reports), lineage_s


def fixed_cost(spark: Any, aws: Any, fmt: str, iceberg_uri: str,
               batches: int = 8) -> tuple[float, dict[str, float]]:
    """Median seconds of a plain one-object write, and of a loader batch of one tiny object with
    its parts (plan, HEAD+read+checks, commit+ledger): the loader's fixed cost per batch."""
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    tiny = make_files("parquet", batches, 5, prefix="tiny/")
    events = put_many(aws, landing, [(f.key, f.body) for f in tiny])
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=iceberg_uri), spark)
    if fmt == "iceberg":
        parts.target.session()
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
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--rows", type=int, default=0, help="rows per file")
    ap.add_argument("--formats", default=",".join(on_line),
                    help=f"comma-separated target formats (default: those on the running Spark line, "
                         f"here {line}: %(default)s)")
    ap.add_argument("--no-fixed-cost", action="store_true", help="skip the one-object batches")
    ap.add_argument("--no-warm-pair", action="store_true",
                    help="skip the untimed full-size pair that runs first: the JVM compiles the hot "
                         "paths over the first few full-size writes (measured: six plain writes of 300 "
                         "objects in a row took 12.2, 10.4, 9.9, 9.4, 8.0, 7.5 s), which would land on "
                         "pair 1")
    ap.add_argument("--pairs", type=int, default=3,
                    help="plain/loader pairs per format, alternating which runs first (medians printed)")
    ap.add_argument("--json", metavar="PATH",
                    help="also write the per-format medians, the Spark version and the load average to "
                         "PATH as JSON (bench/lines.py reads it to compare Spark lines)")
    args = ap.parse_args(argv)
    if args.pairs < 1:
        ap.error(f"--pairs: expected 1 or more, found {args.pairs}")
    args.formats = args.formats.split(",")
    for fmt in args.formats:
        if fmt not in on_line:
            why = jars.NOT_ON_LINE.get((line, fmt)) or f"expected one of {', '.join(on_line)}"
            ap.error(f"--formats: {fmt!r} is not available on Spark {line}: {why}")
    return args


def main() -> None:
    """The plain write is `spark.read.parquet(...)` → Delta through delta-spark, Hudi's datasource,
    Iceberg's `writeTo().append()`. `--pairs` pairs a format (fresh objects and tables each),
    alternating which side runs first. The plain+lineage side is what writing the loader's five
    lineage columns costs, apart from its lookup and checks. An untimed full-size pair runs first
    (the JVM's compilation of the hot paths, which goes on over the first few full-size writes,
    would otherwise land on the first timed pair)."""
    args = parse_args()
    n = args.files or (40 if args.quick else 300)
    rows = args.rows or (2000 if args.quick else 20000)
    files = make_files("parquet", n, rows)
    mb = sum(len(f.body) for f in files) / 1e6
    load_start = os.getloadavg()[0]
    print(f"Spark {pyspark.__version__}; objects: {n} parquet files, {rows} rows each, {mb:.1f} MB; "
          f"moto over s3a, local[2]; {args.pairs} pairs a format, medians; load average {load_start:.2f}")
    print(f"{'format':<8} {'plain s':>8} {'loader s':>9} {'plain MB/s':>11} {'loader MB/s':>12} "
          f"{'loader/plain time':>18} {'batches':>8} {'plain+lineage s':>16} {'loader/that':>14}")
    results: dict[str, dict[str, Any]] = {}
    with stack(every=True) as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        uri = f"jdbc:sqlite:{tmp}/catalog.db"
        for fmt in args.formats:
            warm_up(spark, aws, fmt, uri)
            if not args.no_warm_pair:
                print("  (a warm-up pair, not counted:)")
                run_format(spark, aws, fmt, files, uri, loader_first=True)
            pairs = [run_format(spark, aws, fmt, files, uri, loader_first=i % 2 == 1)
                     for i in range(args.pairs)]
            base_s, load_s, lineage_s = (statistics.median(p[i] for p in pairs) for i in (0, 1, 3))
            batches = pairs[0][2]
            print(f"{fmt:<8} {base_s:>8.2f} {load_s:>9.2f} {mb / base_s:>11.2f} {mb / load_s:>12.2f} "
                  f"{load_s / base_s:>17.2f}x {batches:>8} {lineage_s:>16.2f} {load_s / lineage_s:>13.2f}x"
                  "   pairs: " + ", ".join(f"{p[1] / p[0]:.2f}x" for p in pairs))
            results[fmt] = {"format": fmt, "plain_s": base_s, "loader_s": load_s, "ratio": load_s / base_s,
                            "plain_lineage_s": lineage_s, "batches": batches,
                            "pair_ratios": [p[1] / p[0] for p in pairs]}
        if not args.no_fixed_cost:
            print(f"load average {os.getloadavg()[0]:.2f}")
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
        out = {"spark": version, "line": jars.line_of(version), "files": n, "rows": rows, "mb": mb,
               "pairs": args.pairs, "warm_pair": not args.no_warm_pair, "load_average_start": load_start,
               "load_average_end": os.getloadavg()[0], "formats": list(results.values())}
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
