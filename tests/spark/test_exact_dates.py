"""Dates and timestamps at the calendar's edges load exactly, into every table format: what pyarrow
writes (proleptic Gregorian, no Spark writer in the footer) is read and written as it is."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet import jars
from lakeinlet.aws import AwsSection
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parts,
    put,
    record,
    spark_rows,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]

DATES = [date(1, 1, 1), date(1582, 10, 10), date(9999, 12, 31)]
TIMES = [datetime(1, 1, 1, tzinfo=UTC), datetime(1582, 10, 10, 12, 30, tzinfo=UTC),
         datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)]
AS_TEXT = {("0001-01-01", "0001-01-01 00:00:00"), ("1582-10-10", "1582-10-10 12:30:00"),
           ("9999-12-31", "9999-12-31 23:59:59.999999")}


def _parquet(int96: bool) -> bytes:
    sink = io.BytesIO()
    table = pa.table({"id": [1, 2, 3], "d": pa.array(DATES, pa.date32()),
                      "ts": pa.array(TIMES, pa.timestamp("us", tz="UTC"))})
    pq.write_table(table, sink, use_deprecated_int96_timestamps=int96)
    return sink.getvalue()


def test_ancient_and_far_dates_and_timestamps_round_trip_on_every_format(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    events = [put(s3, landing, "edges/micros.parquet", _parquet(False)),
              put(s3, landing, "edges/int96.parquet", _parquet(True))]
    on_line = [f for f in ("delta", "hudi", "iceberg") if (jars.installed_line(), f) not in jars.NOT_ON_LINE]
    for i, fmt in enumerate(on_line):  # Hudi has no Spark 4 bundle: 3.5 runs all three
        p = parts(make_config(aws, lake, schema=None, target_format=fmt, table=f"s3a://{lake}/{fmt}"), spark)
        if i == 0:
            record(p.changelog, events)  # one changelog, three tables
        p.loader().drain()
        assert {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)} == {
            "edges/micros.parquet": ("loaded", 3), "edges/int96.parquet": ("loaded", 3)}, fmt
        read = spark_rows(spark, p).selectExpr("cast(d as string) d", "cast(ts as string) ts").collect()
        assert sorted((r["d"], r["ts"]) for r in read) == sorted([*AS_TEXT, *AS_TEXT]), fmt
        other = target_rows(p)  # delta-rs, hudi-rs or pyiceberg: the bytes written, no calendar rebase
        assert sorted(other.column("d").to_pylist()) == sorted(DATES * 2), fmt
        assert sorted(other.column("ts").to_pylist()) == sorted(TIMES * 2), fmt
