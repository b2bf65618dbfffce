"""A timestamp without time zone (pandas' and pyarrow's default) stays one in every format, batch
after batch, and the table reads back (Hudi's through Spark where hudi-rs 0.5.0 panics)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pyarrow as pa
import pytest

from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parquet_bytes,
    parts,
    put,
    record,
    spark_rows,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]
T1, T2 = datetime(2024, 1, 2, 3, 4, 5), datetime(2024, 1, 2, 3, 4, 6)


def test_timestamp_ntz_is_kept_by_every_format(spark: Any, aws: Any, target_format: str) -> None:
    """Before: the second batch's object was `schema_conflict` ("timestamp in the table but
    timestamp_ntz in the object") in every format, Iceberg made the column timestamptz, and
    hudi-rs panicked on the Hudi table ("not yet implemented")."""
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None, target_format=target_format), spark)
    for n, (key, t) in enumerate([("a.parquet", T1), ("b.parquet", T2)]):
        record(p.changelog, [put(s3, landing, key, parquet_bytes([{"id": n, "t": t}]))])
        p.loader().drain()
    assert sorted((r["key"], r["status"]) for r in ledger_rows(p)) == [("a.parquet", "loaded"),
                                                                       ("b.parquet", "loaded")]
    assert p.target.schema().field("t").type == pa.timestamp("us")
    rows = target_rows(p)
    assert sorted(rows.column("t").to_pylist()) == [T1, T2]
    assert spark_rows(spark, p).schema["t"].dataType.typeName() == "timestamp_ntz"
