"""Benchmark: large objects (Parquet, about 1 GB each) loaded by the loader and by a plain
`spark.read…write` of the same objects, in one run on moto over s3a: seconds, MB/s, ratios and
peak memory. Figures, never asserted."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from loader_common import bucket, loader_config, record, stack
from loader_throughput import plain_write, warm_up
from report import Run, add_json_flag

from lakeinlet.aws import client
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.wiring import build

ROWS_PER_CHUNK = 1_000_000
BYTES_PER_ROW = 38  # measured for this schema with random values (snappy), to size the objects


def large_object(gb: float, seed: int) -> bytes:
    """A Parquet object of about `gb` GB in the samples' schema (order_id, customer, amount, ts)."""
    rng = np.random.default_rng(seed)
    rows = int(gb * 1e9 / BYTES_PER_ROW)
    sink = io.BytesIO()
    schema = pa.schema([("order_id", pa.int64()), ("customer", pa.string()), ("amount", pa.float64()),
                        ("ts", pa.timestamp("us", tz="UTC"))])
    with pq.ParquetWriter(sink, schema, compression="snappy") as w:
        for start in range(0, rows, ROWS_PER_CHUNK):
            n = min(ROWS_PER_CHUNK, rows - start)
            w.write_table(pa.table({
                "order_id": pa.array(np.arange(start, start + n, dtype=np.int64) + seed * 10**10),
                "customer": pa.array(rng.integers(0, 2**62, n)).cast(pa.string()),
                "amount": pa.array(rng.random(n) * 1000),
                "ts": pa.array(rng.integers(1_700_000_000_000_000, 1_800_000_000_000_000, n),
                               pa.timestamp("us", tz="UTC"))}, schema))
    return sink.getvalue()


def jvm_pid() -> int | None:
    """The Spark driver JVM: a `java` process whose parent is this process."""
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            name, ppid = stat[stat.index("(") + 1:stat.rindex(")")], int(stat.rsplit(")", 1)[1].split()[1])
            if name == "java" and ppid == os.getpid():
                return int(d.name)
    return None


def reset_peak(pid: int | None) -> None:
    """Start the process's peak RSS (VmHWM) afresh (Linux: clear_refs 5)."""
    if pid is not None:
        with contextlib.suppress(OSError):
            Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_mb(pid: int | None) -> str:
    if pid is None:
        return "n/a"
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return f"{int(line.split()[1]) / 1024:,.0f}"
    return "n/a"


def main() -> None:
    """The objects hold random values (they do not compress); Spark runs local[2]. A third side,
    plain+lineage, is the plain write with the loader's five lineage columns as constants (what
    writing them costs; the objects have four columns, so five more are a large share of each
    row). An untimed plain write of the first object comes first, so the JVM's compilation of the
    hot paths is not paid by whichever side runs first. The peak resident memory of the Spark JVM
    (its heap capped by spark.driver.memory) and of this Python process is printed for each side,
    to show memory stays bounded by the heap, not the objects' size."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one object of 0.25 GB")
    ap.add_argument("--objects", type=int, default=2, help="objects (default 2)")
    ap.add_argument("--gb", type=float, default=1.0, help="size of each object in GB (default 1)")
    ap.add_argument("--formats", default="delta", help="target formats (default delta)")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    if args.quick:
        args.objects, args.gb = 1, 0.25
    print(f"load average at start: {os.getloadavg()}")
    with stack(every=True) as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        catalog = f"jdbc:sqlite:{tmp}/catalog.db"
        heap = spark.conf.get("spark.driver.memory", "1g")
        java = jvm_pid()
        s3 = client("s3", aws)
        landing = bucket(aws, "land")
        events, t0 = [], time.perf_counter()
        for i in range(args.objects):  # one object in memory at a time
            body, key = large_object(args.gb, i + 1), f"large/part-{i}.parquet"
            s3.upload_fileobj(io.BytesIO(body), landing, key)
            etag = s3.head_object(Bucket=landing, Key=key)["ETag"].strip('"')
            events.append(ObjectEvent(landing, key, "ObjectCreated:Put", datetime.now(UTC), len(body), etag))
            del body
        mb = sum(e.size or 0 for e in events) / 1e6
        print(f"objects: {args.objects} Parquet objects, {mb / args.objects:,.0f} MB each ({mb:,.0f} MB), "
              f"built and uploaded in {time.perf_counter() - t0:.0f} s; moto over s3a, local[2]")
        paths = [f"s3a://{landing}/{e.key}" for e in events]
        print(f"Spark driver memory (JVM heap cap) {heap}")
        print(f"{'format':<8} {'side':<7} {'seconds':>8} {'MB/s':>7} {'loader/plain':>13} "
              f"{'JVM peak RSS MB':>16} {'Python peak RSS MB':>19}")
        for fmt in args.formats.split(","):
            lake = bucket(aws, "lake")
            warm_up(spark, aws, fmt, catalog)
            warm_s = plain_write(spark, fmt, paths[:1], bucket(aws, "warm"))
            print(f"{fmt:<8} {'(warm-up: plain write of the first object, untimed)':<60} {warm_s:.1f} s")
            sides: dict[str, float] = {}
            for side, lineage in (("plain", False), ("plain+l", True)):
                reset_peak(java)
                side_s = sides[side] = plain_write(spark, fmt, paths, lake, lineage=lineage)
                ratio = f"{side_s / sides['plain']:.2f}x" if lineage else ""
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"{fmt:<8} {side:<7} {side_s:>8.1f} {mb / side_s:>7.1f} {ratio:>13} "
                      f"{peak_mb(java):>16} {rss:>19,.0f}")
            parts: Any = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=catalog), spark)
            if fmt == "iceberg":
                parts.target.session()
            record(parts.changelog, events)
            reset_peak(java)
            t1 = time.perf_counter()
            summary = parts.loader().drain()
            load_s = time.perf_counter() - t1
            ratio = f"{load_s / sides['plain']:.2f}x"
            print(f"{fmt:<8} {'loader':<7} {load_s:>8.1f} {mb / load_s:>7.1f} {ratio:>13} "
                  f"{peak_mb(java):>16} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:>19,.0f}"
                  f"   statuses {dict(summary.statuses)}")
            report.row(f"{fmt}: {args.objects} Parquet objects of {mb / args.objects:,.0f} MB "
                       "(moto over s3a, local[2])",
                       f"the loader: {load_s:.1f} s, {mb / load_s:.1f} MB/s, JVM peak RSS "
                       f"{peak_mb(java)} MB", f"plain `spark.read…write`: {sides['plain']:.1f} s; with the "
                       f"lineage as constants {sides['plain+l']:.1f} s", ratio, loader_s=load_s, **sides)
    print("Python peak RSS is the process's whole-run peak (it built each object in memory); the JVM's "
          "is reset before each side. load average at end: " + str(os.getloadavg()))
    report.write(args.json)


if __name__ == "__main__":
    main()
