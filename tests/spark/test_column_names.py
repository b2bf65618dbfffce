"""Column names a format cannot store: the object is set aside alone (or renamed, opt-in), and a
--partition-by column the first batch lacks stops the run in one line."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from lakeinlet.errors import TerminalError
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parquet_bytes,
    parts,
    put,
    record,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def test_hudi_sets_aside_an_unstorable_name_and_loads_the_rest(spark: Any, aws: Any) -> None:
    """Before: Hudi's Avro schema refused `Order ID` and the whole batch failed, for ever."""
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None, target_format="hudi"), spark)
    record(p.changelog, [put(s3, landing, "good.parquet", parquet_bytes([{"id": 1, "name": "a"}])),
                         put(s3, landing, "bad.parquet", parquet_bytes([{"id": 2, "Order ID": 7}]))])
    p.loader().drain()
    by_key = {r["key"]: r for r in ledger_rows(p)}
    assert by_key["good.parquet"]["status"] == "loaded"
    assert by_key["bad.parquet"]["status"] == "schema_conflict"
    assert "column 'Order ID' cannot be stored in a hudi table" in by_key["bad.parquet"]["reason"]
    assert "--column-names rename" in by_key["bad.parquet"]["reason"]
    rows = target_rows(p)
    assert rows.column("id").to_pylist() == [1] and "Order ID" not in rows.column_names


def test_rename_loads_it_and_a_clash_is_set_aside(spark: Any, aws: Any) -> None:
    """`--column-names rename` on Delta: `Order ID` loads as `Order_ID`, a struct's `unit price`
    as `unit_price`, into the column another object holds as `Order_ID`; an object holding both
    `Order ID` and `Order_ID` is set aside; then a
    --partition-by column that the first batch lacks stops the run in one line."""
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, schema=None)
    config = replace(config, tables=replace(config.tables, column_names="rename"))
    p = parts(config, spark)
    record(p.changelog, [
        put(s3, landing, "a.parquet", parquet_bytes([{"id": 1, "Order ID": 7, "s": {"unit price": 2.5}}])),
        put(s3, landing, "clash.parquet", parquet_bytes([{"id": 2, "Order ID": 8, "Order_ID": 9}])),
        put(s3, landing, "c.parquet", parquet_bytes([{"id": 3, "Order_ID": 10}]))])
    p.loader().drain()
    by_key = {r["key"]: r for r in ledger_rows(p)}
    assert by_key["a.parquet"]["status"] == "loaded"
    assert by_key["clash.parquet"]["status"] == "schema_conflict"
    assert "renamed to 'Order_ID' it clashes with column 'Order_ID'" in by_key["clash.parquet"]["reason"]
    assert by_key["c.parquet"]["status"] == "loaded"
    rows = sorted(target_rows(p).to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["Order_ID"], r["s"]) for r in rows] == [(1, 7, {"unit_price": 2.5}), (3, 10, None)]

    landing, lake, s3 = new_lake(aws)
    other = make_config(aws, lake, schema=None)
    p2 = parts(replace(other, tables=replace(other.tables, partition_by=("day",))), spark)
    record(p2.changelog, [put(s3, landing, "b.parquet", parquet_bytes([{"id": 3, "Day": "x"}]))])
    with pytest.raises(TerminalError, match=r"^--partition-by day: no such column in the rows of the "
                                            r"table's first batch; columns available: id, Day, _source"):
        p2.loader().drain()
