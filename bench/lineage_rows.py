"""Benchmark: the loader's per-row lineage cost apart from the object store: local Parquet files read
by Spark into its no-op sink, plain, with the lineage columns as constants, and with the lineage as
the loader builds it. Medians and ratios, never asserted."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyspark.sql import Observation, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from report import Run, add_json_flag  # noqa: E402

from lakeinlet.dev.samples import SCHEMA_DDL  # noqa: E402
from lakeinlet.incremental.model import PlannedObject  # noqa: E402
from lakeinlet.incremental.read import lineage as read_lineage  # noqa: E402
from lakeinlet.incremental.read import reader as spark_reader  # noqa: E402
from lakeinlet.incremental.settings import ReadSection  # noqa: E402

CONSTANTS = {"_source_bucket": "land-0123abcd", "_source_key": "parquet/part-00000.parquet",
             "_source_etag": "0123456789abcdef0123456789abcdef",
             "_source_event_time": datetime(2026, 1, 1, tzinfo=UTC),
             "_ingest_batch": "20260101T000000-0123456789ab"}


class LocalReader(spark_reader.SparkReader):
    """The loader's reader over local files: an object's key is its absolute path."""

    def uri(self, o: PlannedObject) -> str:
        return f"file:{o.key}"


def write_files(folder: Path, files: int, rows: int) -> list[Path]:
    """`files` Parquet files of `rows` rows each in the samples' schema, random values."""
    out = []
    for i in range(files):
        rng = np.random.default_rng(i)
        path = folder / f"part-{i:05d}.parquet"
        pq.write_table(pa.table({
            "order_id": pa.array(np.arange(rows, dtype=np.int64) + i * rows),
            "customer": pa.array(rng.integers(0, 2**62, rows)).cast(pa.string()),
            "amount": pa.array(rng.random(rows) * 1000),
            "ts": pa.array(rng.integers(1_700_000_000_000_000, 1_800_000_000_000_000, rows),
                           pa.timestamp("us", tz="UTC"))}), path)
        out.append(path)
    return out


def sides(spark: Any, paths: list[Path], rows: int) -> dict[str, Any]:
    """Each side as a function building its DataFrame (and, for the loader's, its Observation)."""
    reader = LocalReader(spark, ReadSection(source_format="parquet", schema=SCHEMA_DDL), "file")
    objs = [PlannedObject("local", str(p), f"etag{i:028d}", None, p.stat().st_size, f"e{i}",
                          datetime.now(UTC), 0) for i, p in enumerate(paths)]

    def raw() -> Any:
        return spark.read.schema(SCHEMA_DDL).parquet(*(f"file:{p}" for p in paths))

    def loader(join: bool) -> Any:
        def build() -> tuple[Any, Observation]:
            seen = Observation()
            limits: dict[str, Any] = {"MAP_LOOKUP_MAX": 0, "MAP_PROBE_BUDGET": 0} if join else \
                {"MAP_LOOKUP_MAX": 10**9}
            with patch.multiple(read_lineage, **limits):
                df = reader._with_lineage(raw(), objs, "bench", rows * len(paths), seen)
            return df, seen
        return build

    return {"plain": lambda: (raw(), None),
            "constants": lambda: (raw().select("*", *(F.lit(v).alias(c) for c, v in CONSTANTS.items())),
                                  None),
            "loader (map)": loader(join=False),
            "loader (join)": loader(join=True)}


def run(side: Any, sink: str, out: Path) -> float:
    df, seen = side()
    t0 = time.perf_counter()
    df.write.format(sink).mode("overwrite").save(str(out))
    seconds = time.perf_counter() - t0
    if seen is not None and (m := seen.get)["unmatched"]:
        raise SystemExit(f"{m['unmatched']} of {m['rows']} rows found no lineage: the figures "
                         "would be of a lookup that matched nothing")
    return seconds


def main() -> None:
    """No emulator and no S3 requests: only Spark's per-row work is timed, three ways, same run:

    - plain: the read alone;
    - constants: the read with the five lineage columns as literals (what any writer of them pays);
    - loader: the read with the lineage as the loader builds it for a one-pass write
      (`SparkReader._with_lineage` with an Observation: the lookup by file path and the observed
      counts), by map probe and by broadcast join (the two lookups the loader chooses between).

    The loader's sides check their observation: every row found its lineage (else the figures
    would be of a lookup that matched nothing). Rounds alternate the order; medians printed, and
    ratios against plain and against constants.
    """
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 files of 1,000,000 rows, 2 rounds")
    ap.add_argument("--files", type=int, default=2, help="files (default 2: the map lookup's case)")
    ap.add_argument("--rows", type=int, default=5_000_000, help="rows per file (default 5,000,000)")
    ap.add_argument("--rounds", type=int, default=3, help="timed rounds after an untimed one")
    ap.add_argument("--sink", choices=("noop", "parquet"), default="noop",
                    help="noop: Spark's per-row work only; parquet: and a local Parquet write")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    if args.quick:
        args.rows, args.rounds = 1_000_000, 2
    for name in ("files", "rows", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name}: expected 1 or more, found {getattr(args, name)}")
    spark = SparkSession.builder.master("local[2]").appName("lakeinlet-bench-lineage") \
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false") \
        .config("spark.sql.shuffle.partitions", "4").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_files(Path(tmp), args.files, args.rows)
        print(f"{args.files} local Parquet files of {args.rows:,} rows (4 columns), sink {args.sink}, "
              f"local[2]; {args.rounds} rounds after an untimed one, order alternating; "
              f"load average {os.getloadavg()[0]:.2f}")
        built = sides(spark, paths, args.rows)
        names = list(built)
        times: dict[str, list[float]] = {n: [] for n in names}
        for r in range(args.rounds + 1):
            for n in (names if r % 2 == 0 else names[::-1]):
                s = run(built[n], args.sink, Path(tmp) / "out" / n.replace(" ", "_"))
                if r:
                    times[n].append(s)
        med = {n: statistics.median(v) for n, v in times.items()}
        print(f"{'side':<15} {'median s':>9} {'vs plain':>9} {'vs constants':>13}   rounds")
        for n in names:
            print(f"{n:<15} {med[n]:>9.2f} {med[n] / med['plain']:>8.2f}x {med[n] / med['constants']:>12.2f}x"
                  "   " + ", ".join(f"{s:.2f}" for s in times[n]))
        print(f"load average {os.getloadavg()[0]:.2f}")
        loader = [n for n in names if n not in ("plain", "constants")]
        report.row(f"loader's per-row lineage cost ({args.files} local Parquet files of {args.rows:,} rows "
                   f"into Spark's {args.sink} sink; medians of {args.rounds} rounds)",
                   "loader's one-pass lineage: " + ", ".join(f"{med[n]:.2f} s {n}" for n in loader),
                   f"plain read {med['plain']:.2f} s; with the lineage as constants {med['constants']:.2f} s",
                   "; ".join(f"{n}: {med[n] / med['plain']:.2f}x the plain read, "
                             f"{med[n] / med['constants']:.2f}x the constants" for n in loader),
                   medians=med, rounds=times)
    spark.stop()
    report.write(args.json)


if __name__ == "__main__":
    main()
