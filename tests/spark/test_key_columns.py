"""Partition values in keys become columns (`--partition-columns auto`): VPC flow logs' Hive-
compatible folders on every target format, typed by --schema, used in --partition-by, the rows'
own column kept, a value that does not cast set aside; read back by another engine."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection
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

VPC = "AWSLogs/aws-account-id=123456789012/aws-service=vpcflowlogs/aws-region=eu-west-1/year=2026/month=11/"


def test_vpc_flow_log_folders_become_typed_partition_columns(spark: Any, aws: AwsSection,
                                                             target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    objects = {
        "day=27/hour=09/a.parquet": [{"srcaddr": "a", "bytes": 1}, {"srcaddr": "b", "bytes": 2}],
        "day=28/hour=__HIVE_DEFAULT_PARTITION__/b.parquet": [{"srcaddr": "c", "bytes": 3}],
        "Day=28/hour=11/c.parquet": [{"srcaddr": "d", "bytes": 4, "hour": "10"},  # Day: the column day
                                     {"srcaddr": "e", "bytes": 5, "hour": None}],
        "day=xx/hour=12/d.parquet": [{"srcaddr": "f", "bytes": 6}],
    }
    config = make_config(aws, lake, schema="srcaddr STRING, bytes BIGINT, day INT, hour STRING",
                         target_format=target_format, prefix=("AWSLogs/",))
    config = replace(config, tables=replace(config.tables, partition_by=("day",), column_names="rename"))
    p = parts(config, spark)
    record(p.changelog, [put(s3, landing, VPC + k, parquet_bytes(rows)) for k, rows in objects.items()])
    p.loader().drain()

    ledger = {r["key"].removeprefix(VPC): r for r in ledger_rows(p)}
    assert {k: r["status"] for k, r in ledger.items()} == {
        **dict.fromkeys(list(objects)[:3], "loaded"), "day=xx/hour=12/d.parquet": "schema_conflict"}
    assert ledger["day=xx/hour=12/d.parquet"]["reason"].startswith(
        f"partition value day='xx' in key s3://{landing}/{VPC}day=xx/hour=12/d.parquet does not cast to int, "
        "the type of column 'day' (table or --schema)")
    rows = target_rows(p)
    assert rows.schema.field("day").type == pa.int32()
    got = sorted((r["srcaddr"], r["day"], r["hour"], r["year"], r["aws_region"], r["aws_account_id"])
                 for r in rows.to_pylist())
    assert got == [("a", 27, "09", "2026", "eu-west-1", "123456789012"),
                   ("b", 27, "09", "2026", "eu-west-1", "123456789012"),
                   ("c", 28, None, "2026", "eu-west-1", "123456789012"),
                   ("d", 28, "10", "2026", "eu-west-1", "123456789012"),  # the rows' own value
                   ("e", 28, "11", "2026", "eu-west-1", "123456789012")]  # the key's fills a null
