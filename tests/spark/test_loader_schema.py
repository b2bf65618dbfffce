"""Schemas (inferred, evolving, explicit JSON file, type conflicts), partitioning, CSV and ORC."""

from __future__ import annotations

import io
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files, make_rows
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import Position
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def test_inferred_schema_evolves_with_new_columns(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None), spark)
    record(p.changelog, [put(s3, landing, "a.parquet", _parquet(make_rows(1, 2)))])
    p.loader().drain()
    wider = [r | {"region": "eu"} for r in make_rows(2, 2)]
    record(p.changelog, [put(s3, landing, "b.parquet", _parquet(wider))])
    p.loader().drain()
    table = target_rows(p)
    assert "region" in table.schema.names
    assert Counter(table.column("region").to_pylist()) == {None: 2, "eu": 2}


def test_a_type_conflict_quarantines_that_object_and_loads_the_rest(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None), spark)
    record(p.changelog, [put(s3, landing, "ok.parquet", _parquet(make_rows(1, 2)))])
    p.loader().drain()
    bad = [r | {"order_id": f"x{r['order_id']}"} for r in make_rows(2, 2)]
    record(p.changelog, [put(s3, landing, "bad/strings.parquet", _parquet(bad)),
                         put(s3, landing, "good.parquet", _parquet(make_rows(3, 2)))])
    p.loader().drain()
    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert ledger["bad/strings.parquet"]["status"] == "schema_conflict"
    assert "'order_id' is bigint in the table but string" in ledger["bad/strings.parquet"]["reason"]
    assert "--on-type-conflict" in ledger["bad/strings.parquet"]["reason"]
    assert ledger["good.parquet"]["status"] == "loaded"
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for r in make_rows(1, 2) + make_rows(3, 2))
    assert p.target.checkpoint().position == Position(1)


def test_on_type_conflict_fail_stops_without_moving_the_checkpoint(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, schema=None)
    p = parts(replace(config, read=replace(config.read, on_type_conflict="fail")), spark)
    record(p.changelog, [put(s3, landing, "ok.parquet", _parquet(make_rows(1, 2)))])
    p.loader().drain()
    bad = [r | {"order_id": f"x{r['order_id']}"} for r in make_rows(2, 2)]
    record(p.changelog, [put(s3, landing, "bad/strings.parquet", _parquet(bad))])
    with pytest.raises(TerminalError, match=r"order_id.*bad/strings\.parquet.*did not move"):
        p.loader().drain()
    assert p.target.checkpoint().position == Position(0)


def test_parquet_files_of_one_first_batch_that_cannot_merge(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None), spark)
    bad = [r | {"order_id": f"x{r['order_id']}"} for r in make_rows(2, 2)]
    record(p.changelog, [put(s3, landing, "a.parquet", _parquet(make_rows(1, 2))),
                         put(s3, landing, "b.parquet", _parquet(bad))])
    p.loader().drain()
    statuses = {r["key"]: r["status"] for r in ledger_rows(p)}
    assert statuses == {"a.parquet": "loaded", "b.parquet": "schema_conflict"}


def test_partitioned_target_with_csv_and_a_json_schema_file(spark: Any, aws: AwsSection,
                                                            tmp_path: Path) -> None:
    landing, lake, s3 = new_lake(aws)
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(spark.createDataFrame(
        [], "order_id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP").schema.jsonValue()))
    config = make_config(aws, lake, "csv", schema=str(schema_file))
    config = replace(config, tables=replace(config.tables, partition_by=("customer",)))
    p = parts(config, spark)
    files = make_files("csv", 3, 3)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])
    p.loader().drain()
    dt = p.target.table()
    assert dt is not None and dt.metadata().partition_columns == ["customer"]
    actions = pa.table(dt.get_add_actions(flatten=True))
    customers = {r["customer"] for f in files for r in f.rows}
    assert set(actions.column("partition.customer").to_pylist()) == customers
    assert sum(actions.column("num_records").to_pylist()) == 9  # stats from the written footers
    table = target_rows(p)
    assert sorted(zip(table.column("order_id").to_pylist(), table.column("customer").to_pylist(),
                      strict=True)) == sorted((r["order_id"], r["customer"]) for f in files for r in f.rows)


def test_orc_objects_load(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    sink = io.BytesIO()
    rows = [r | {"ts": r["ts"].replace(tzinfo=None)} for r in make_rows(3, 4)]  # ORC: plain timestamp
    orc.write_table(pa.Table.from_pylist(rows), sink)
    p = parts(make_config(aws, lake, "orc"), spark)
    record(p.changelog, [put(s3, landing, "x.orc", sink.getvalue())])
    p.loader().drain()
    assert sorted(target_rows(p).column("order_id").to_pylist()) == [r["order_id"] for r in rows]
