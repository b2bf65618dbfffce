"""The column-name rule of each format, the renamer, and the start-up --partition-by check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet.errors import ConfigError
from lakeinlet.incremental import column_names as cn
from lakeinlet.incremental.settings import LoaderConfig, ReadSection, TablesSection
from lakeinlet.incremental.wiring import partition_check

FOUND = {"id": {}, "Order ID": {}, "price.usd": {}, "1st": {}, "s": {"unit price": {}, "ok": {}}, "": {}}


def test_each_format_refuses_what_it_cannot_store() -> None:
    assert cn.unusable(FOUND, "hudi") == ["Order ID", "price.usd", "1st", "s.unit price", ""]
    assert cn.unusable(FOUND, "delta") == [""]  # delta-spark 3.3 reads and appends the others
    assert cn.unusable(FOUND, "iceberg") == [""]


def test_a_name_the_table_already_holds_is_kept() -> None:
    """A table that holds `Order ID` (loaded before this rule) keeps loading it."""
    table = {"Order ID": {}, "s": {"unit price": {}}}
    assert cn.unusable(FOUND, "hudi", table) == ["price.usd", "1st", ""]
    assert cn.unusable({"s": {"unit price": {}, "new one": {}}}, "hudi", table) == ["s.new one"]


def test_the_renamer_is_portable_deterministic_and_refuses_clashes() -> None:
    new, clashes = cn.renames({"Order ID": {}, "order_id": {}, "a-b": {}, "a b": {}, "9x": {}})
    assert new == {"Order ID": "Order_ID", "a-b": "a_b", "a b": "a_b", "9x": "_9x"}
    assert clashes == {"Order ID": "renamed to 'Order_ID' it clashes with column 'order_id'",
                       "a b": "renamed to 'a_b' it clashes with column 'a-b'"}
    assert all(not cn.RULES[f].refuses(n) for f in cn.RULES for n in new.values())


def test_reason_names_the_column_and_the_fix() -> None:
    assert cn.reason("s.unit price", "hudi") == (
        "column 's.unit price' cannot be stored in a hudi table (Hudi stores Avro names: a letter "
        "or _, then letters, digits or _): rename it in the source and upload it again, or set "
        "--column-names rename to load it as 'unit_price'")


def test_schema_names_without_spark(tmp_path: Path) -> None:
    assert cn.schema_names("id BIGINT, `Order ID` STRING, m MAP<STRING,INT>, s STRUCT<a:INT,b:INT>") == \
        ["id", "Order ID", "m", "s"]
    assert cn.schema_names("struct<a:int,b:decimal(10,2)>") == ["a", "b"]
    f = tmp_path / "s.json"
    f.write_text('{"type": "struct", "fields": [{"name": "day", "type": "string"}]}')
    assert cn.schema_names(str(f)) == ["day"]
    assert cn.schema_names(None) is None


class Table:
    def __init__(self, schema: pa.Schema | None) -> None:
        self._schema = schema

    def schema(self) -> pa.Schema | None:
        return self._schema


def config(partition_by: tuple[str, ...], schema: str | None = None, keys: str = "auto") -> LoaderConfig:
    tables = TablesSection(changelog="c", table="s3://lake/t", partition_by=partition_by)
    return replace(LoaderConfig(), tables=tables, read=ReadSection(schema=schema, partition_columns=keys))


@pytest.mark.parametrize(("cfg", "table", "line"), [
    (config(("day",)), pa.schema([("id", pa.int64())]),
     "table s3://lake/t: --partition-by day: no such column in the table; columns available: id, "
     "_source_bucket, _source_key, _source_etag, _source_event_time, _ingest_batch"),
    (config(("day", "id"), "id BIGINT, Day2 STRING", "none"), None,
     "table s3://lake/t: --partition-by day: no such column in --schema; columns available: id, Day2, "
     "_source_bucket, _source_key, _source_etag, _source_event_time, _ingest_batch"),
    (config(("day", "id"), "id BIGINT", "dt"), None,
     "table s3://lake/t: --partition-by day: no such column in --schema or --partition-columns; columns "
     "available: id, dt, _source_bucket, _source_key, _source_etag, _source_event_time, _ingest_batch"),
])
def test_partition_by_a_missing_column_is_refused_at_start_up(cfg: LoaderConfig, table: Any,
                                                               line: str) -> None:
    with pytest.raises(ConfigError) as err:
        partition_check(cfg, Table(table))  # type: ignore[arg-type]
    assert err.value.problems == [line]


def test_partition_by_a_known_column_or_an_unknown_schema_passes() -> None:
    partition_check(config(("day", "_source_bucket")), Table(pa.schema([("day", pa.string())])))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        partition_check(config(("DAY",)), Table(pa.schema([("day", pa.string())])))  # type: ignore[arg-type]
    partition_check(config(("day",)), Table(None))  # type: ignore[arg-type]
    # a column keys may give (--partition-columns auto, or named) beside an explicit --schema
    partition_check(config(("day",), "id BIGINT"), Table(None))  # type: ignore[arg-type]
    partition_check(config(("day",), "id BIGINT", "region,day"), Table(None))  # type: ignore[arg-type]
