"""Test helpers: upload sample objects, turn them into changelog rows, build a loader config."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection, client, storage_options
from lakeinlet.changelog import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.settings import LoaderConfig, PlanSection, ReadSection, RunSection, TablesSection
from lakeinlet.incremental.wiring import Parts, build
from lakeinlet.samples import SCHEMA_DDL, SampleFile
from lakeinlet.spark import SparkSection
from tests.conftest import unique


def put(s3: Any, bucket: str, key: str, body: bytes) -> ObjectEvent:
    """Upload one object and return the created event S3 would have sent."""
    resp = s3.put_object(Bucket=bucket, Key=key, Body=body)
    return ObjectEvent(bucket, key, "ObjectCreated:Put", datetime.now(UTC), len(body),
                       resp["ETag"].strip('"'))


def upload(s3: Any, bucket: str, files: Sequence[SampleFile]) -> list[ObjectEvent]:
    return [put(s3, bucket, f.key, f.body) for f in files]


def record(changelog: DeltaChangelog, events: Sequence[ObjectEvent]) -> int:
    """Append events as one changelog commit (one poll batch)."""
    batch = uuid.uuid4().hex[:8]
    now = datetime.now(UTC)
    rows = [ReceivedEvent(e, f"{batch}-{i}", now, batch) for i, e in enumerate(events)]
    return changelog.append(rows, {"poll_batch": batch})


def make_config(aws: AwsSection, lake: str, fmt: str = "parquet", schema: str | None = SCHEMA_DDL,
                **plan: Any) -> LoaderConfig:
    tables = TablesSection(changelog=f"s3a://{lake}/changelog", table=f"s3a://{lake}/orders")
    read = ReadSection(source_format=fmt, schema=schema,
                       read_option=("header=true",) if fmt == "csv" else ())
    return LoaderConfig(tables=tables, read=read, plan=replace(PlanSection(), **plan),
                        run=RunSection(), spark=SparkSection(master="local[2]"), aws=aws)


def new_lake(aws: AwsSection) -> tuple[str, str, Any]:
    """A landing bucket and a lake bucket; returns (landing, lake, s3 client)."""
    s3 = client("s3", aws)
    landing, lake = unique("land"), unique("lake")
    for b in (landing, lake):
        s3.create_bucket(Bucket=b)
    return landing, lake, s3


def parts(config: LoaderConfig, spark: Any) -> Parts:
    return build(config, spark)


def target_rows(parts_: Parts) -> pa.Table:
    """The target's rows as delta-rs reads them (through a dataset, not to_pyarrow_table)."""
    dt = DeltaTable(parts_.target.uri, storage_options=storage_options(parts_.config.aws, parts_.target.uri))
    return dt.to_pyarrow_dataset().to_table()


def ledger_rows(parts_: Parts) -> list[dict[str, Any]]:
    return parts_.ledger.read().to_pylist()
