"""Test helpers: upload sample objects, turn them into changelog rows, build a loader config."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.samples import SCHEMA_DDL, SampleFile, make_files, make_rows
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.settings import LoaderConfig, PlanSection, ReadSection, RunSection, TablesSection
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from lakeinlet.incremental.wiring import Parts, build
from lakeinlet.spark import SparkSection
from tests.conftest import unique
from tests.spark.conftest import ICEBERG_URI_ENV


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
                target_format: str = "delta", table: str | None = None, **plan: Any) -> LoaderConfig:
    """A loader config for a lake bucket (target `s3a://<lake>/orders` unless `table` says)."""
    tables = TablesSection(changelog=f"s3a://{lake}/changelog", table=table or f"s3a://{lake}/orders",
                           target_format=target_format)
    read = ReadSection(source_format=fmt, schema=schema,
                       read_option=("header=true",) if fmt == "csv" else ())
    iceberg = IcebergSection(iceberg_catalog_uri=os.environ.get(ICEBERG_URI_ENV))
    return LoaderConfig(tables=tables, read=read, plan=replace(PlanSection(), **plan),
                        run=RunSection(), iceberg=iceberg, spark=SparkSection(master="local[2]"), aws=aws)


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
    """The target's rows as another engine reads them: delta-rs, hudi-rs or pyiceberg (not the
    Spark that wrote them); an empty table before the first commit."""
    try:
        return parts_.target.rows()
    except FileNotFoundError:
        return pa.table({})


def spark_rows(spark: Any, parts_: Parts) -> Any:
    """The target as Spark reads it with the format's own reader (Delta through delta-spark)."""
    target, fmt = parts_.target, parts_.config.tables.target_format
    if fmt == "iceberg":
        return spark.table(target.catalog.spark_name)
    uri = "s3a://" + target.uri[len("s3://"):] if target.uri.startswith("s3://") else target.uri
    return spark.read.format(fmt).load(uri)


def ledger_rows(parts_: Parts) -> list[dict[str, Any]]:
    return parts_.ledger.read().to_pylist()


def finish_racing(loaders: Sequence[subprocess.Popen[str]], logs: Path, timeout: float) -> list[Counter[str]]:
    """Wait for loader processes started together (`--log-format json`), keep their logs under
    `logs`, and require each to exit 0; returns each one's log events counted by name."""
    results = [proc.communicate(timeout=timeout) for proc in loaders]
    for i, (_, err) in enumerate(results):
        (logs / f"loader{i}.log").write_text(err)
    assert [proc.returncode for proc in loaders] == [0] * len(loaders), f"see {logs}/loader*.log"
    return [logged_events(err) for _, err in results]


def logged_events(stderr: str) -> Counter[str]:
    """JSON log lines counted by their `event`."""
    found: Counter[str] = Counter()
    for line in stderr.splitlines():
        if line.startswith("{"):
            found[json.loads(line).get("event", "")] += 1
    return found


def parquet_bytes(rows: list[dict[str, Any]]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def two_row_groups_second_corrupt() -> bytes:
    """A Parquet file with a valid footer whose second row group's data pages are garbage."""
    rows = make_rows(5, 2000)
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink, row_group_size=1000, compression="snappy")
    data = bytearray(sink.getvalue())
    meta = pq.ParquetFile(io.BytesIO(bytes(data))).metadata
    col = meta.row_group(1).column(0)
    start = col.data_page_offset
    data[start + 8:start + 8 + 64] = b"\xff" * 64
    return bytes(data)


def short_of_footers_read_again(spark: Any, aws: AwsSection, reads: Sequence[Any], caplog: Any,
                                target_format: str) -> tuple[Parts, Any]:
    """Loads a Parquet object whose later row group is corrupt beside a good one: the one-pass
    write holds fewer rows than the footers, so the batch is read again, checked, and only the
    good object's rows land (asserted). Returns the parts and the S3 client."""
    landing, lake, s3 = new_lake(aws)
    good = make_files("parquet", 1, 3)[0]
    p = parts(make_config(aws, lake, target_format=target_format), spark)
    record(p.changelog, [put(s3, landing, "half.parquet", two_row_groups_second_corrupt()),
                         put(s3, landing, good.key, good.body)])
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        p.loader().drain()
    assert [b.verify is not None for b in reads] == [True, False]
    rereads = [str(vars(r)) for r in caplog.records if r.getMessage() == "reread"]
    assert len(rereads) == 1 and "footers promise" in rereads[0], rereads
    ledger = {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)}
    assert ledger == {"half.parquet": ("corrupt", 0), good.key: ("loaded", 3)}
    assert sorted(target_rows(p).column("_source_key").to_pylist()) == [good.key] * 3
    return p, s3
