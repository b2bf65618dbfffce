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
from lakeinlet.errors import TerminalError
from lakeinlet.samples import make_files, make_rows
from tests.spark.loader_helpers import make_config, new_lake, parts, put, record, target_rows

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


def test_type_conflict_fails_naming_the_file(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None), spark)
    record(p.changelog, [put(s3, landing, "ok.parquet", _parquet(make_rows(1, 2)))])
    p.loader().drain()
    bad = [r | {"order_id": f"x{r['order_id']}"} for r in make_rows(2, 2)]
    record(p.changelog, [put(s3, landing, "bad/strings.parquet", _parquet(bad))])
    with pytest.raises(TerminalError, match=r"order_id.*bad/strings\.parquet"):
        p.loader().drain()
    assert p.target.checkpoint().position is not None and p.target.checkpoint().position.complete == 0


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
