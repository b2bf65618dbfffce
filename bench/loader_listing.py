"""Benchmark (c): time to ingest 100 new files into a bucket prefix that already holds 1k vs 20k
objects: the loader (driven by changelog events, never lists) beside Spark's own file-stream
source, which lists the prefix on every trigger."""

from __future__ import annotations

import argparse
import tempfile
from typing import Any

from loader_common import bucket, loader_config, put_many, record, stack, timed
from report import Run, add_json_flag

from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.wiring import build


def stream_once(spark: Any, src: str, out: str, checkpoint: str) -> float:
    def run() -> None:
        q = (spark.readStream.schema(SCHEMA_DDL).option("pathGlobFilter", "*.parquet").parquet(src)
             .writeStream.format("parquet").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start(out))
        q.awaitTermination()
    return timed(run)[0]


def one_size(aws: Any, spark: Any, existing: int, new: int) -> tuple[float, float]:
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    fill_s, _ = timed(lambda: put_many(aws, landing, [(f"data/old-{i:06d}.json", b"{}\n")
                                                      for i in range(existing)], threads=32))
    tmp = tempfile.mkdtemp()
    stream_once(spark, f"s3a://{landing}/data/", f"{tmp}/out", f"{tmp}/ckpt")  # lists, reads nothing
    files = make_files("parquet", new, 100, prefix="data/")
    events = put_many(aws, landing, [(f.key, f.body) for f in files])
    parts = build(loader_config(aws, lake, "orders", max_files=10_000), spark)
    record(parts.changelog, events)
    stream_s = stream_once(spark, f"s3a://{landing}/data/", f"{tmp}/out", f"{tmp}/ckpt")
    load_s, summary = timed(lambda: parts.loader().drain())
    assert summary.statuses["loaded"] == new, summary
    rows = spark.read.parquet(f"{tmp}/out").count()
    print(f"{existing:6d} existing objects (uploaded in {fill_s:.0f} s): file stream {stream_s:.2f} s "
          f"({rows} rows), lakeinlet loader {load_s:.2f} s; ratio stream/loader {stream_s / load_s:.2f}x")
    return stream_s, load_s


def main() -> None:
    """The stream is `spark.readStream` on the same s3a prefix, `trigger(availableNow=True)`. The
    old objects are tiny JSON files and the stream uses `pathGlobFilter=*.parquet`: Spark still
    lists every object (the filter applies after listing) but its first trigger reads none of them,
    so that set-up costs a listing, not a read of 20k files. The loader's changelog holds only the
    100 new events (the old objects were loaded before its checkpoint)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="1k vs 5k existing objects")
    ap.add_argument("--sizes", default="", help="comma list of existing-object counts")
    ap.add_argument("--new", type=int, default=100, help="new objects to ingest (default 100)")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    sizes = [int(s) for s in args.sizes.split(",") if s] or ([1000, 5000] if args.quick else [1000, 20000])
    with stack() as (_, aws, spark):
        spark.read.schema(SCHEMA_DDL).json(spark.sparkContext.parallelize([])).count()  # warm-up
        results = {n: one_size(aws, spark, n, args.new) for n in sizes}
        lo, hi = sizes[0], sizes[-1]
        print(f"growth {lo} → {hi} existing objects: file stream {results[hi][0] / results[lo][0]:.2f}x, "
              f"loader {results[hi][1] / results[lo][1]:.2f}x")
        for n, (stream_s, load_s) in results.items():
            report.row(f"{args.new} new objects under a prefix that holds {n:,} (moto over s3a)",
                       f"the loader (changelog events, no listing): {load_s:.2f} s",
                       f"Spark's file-stream source (lists the prefix): {stream_s:.2f} s",
                       f"stream/loader {stream_s / load_s:.2f}x", stream_s=stream_s, loader_s=load_s)
    report.write(args.json)


if __name__ == "__main__":
    main()
