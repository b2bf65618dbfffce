"""Benchmark (a): loader throughput (files/s, MB/s) beside plain `spark.read…write.parquet` of the
same objects, measured in the same run on moto over s3a.
Run: `python bench/loader_throughput.py [--quick]`."""

from __future__ import annotations

import argparse

from loader_common import bucket, loader_config, put_many, record, stack, timed

from lakeinlet.incremental.wiring import build
from lakeinlet.samples import SCHEMA_DDL, make_files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer, smaller files")
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--rows", type=int, default=0, help="rows per file")
    args = ap.parse_args()
    n = args.files or (40 if args.quick else 300)
    rows = args.rows or (2000 if args.quick else 20000)
    with stack() as (_, aws, spark):
        landing, lake = bucket(aws, "land"), bucket(aws, "lake")
        files = make_files("parquet", n, rows)
        events = put_many(aws, landing, [(f.key, f.body) for f in files])
        mb = sum(len(f.body) for f in files) / 1e6
        paths = [f"s3a://{landing}/{f.key}" for f in files]
        spark.read.schema(SCHEMA_DDL).parquet(paths[0]).count()  # JVM and s3a warm-up
        base_s, _ = timed(lambda: spark.read.schema(SCHEMA_DDL).parquet(*paths)
                          .write.mode("overwrite").parquet(f"s3a://{lake}/plain"))
        parts = build(loader_config(aws, lake, "orders", max_files=10_000), spark)
        record(parts.changelog, events)
        load_s, summary = timed(lambda: parts.loader().drain())
        assert summary.statuses["loaded"] == n, summary
        print(f"objects: {n} parquet files, {rows} rows each, {mb:.1f} MB")
        print(f"plain spark.read.parquet → write.parquet: {base_s:.2f} s  "
              f"{n / base_s:.1f} files/s  {mb / base_s:.2f} MB/s")
        print(f"lakeinlet loader (plan+HEAD+read+write+stats+commit+ledger): {load_s:.2f} s  "
              f"{n / load_s:.1f} files/s  {mb / load_s:.2f} MB/s  in {summary.batches} batch(es)")
        print(f"ratio loader/plain time: {load_s / base_s:.2f}x")


if __name__ == "__main__":
    main()
