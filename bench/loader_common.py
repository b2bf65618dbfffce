"""Shared set-up of the loader benchmarks: moto in its own process, a local[2] Spark, uploads."""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lakeinlet.aws import AwsSection, client  # noqa: E402
from lakeinlet.changelog.reader import DeltaChangelog  # noqa: E402
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer  # noqa: E402
from lakeinlet.dev.samples import SCHEMA_DDL  # noqa: E402
from lakeinlet.events import ObjectEvent, ReceivedEvent  # noqa: E402
from lakeinlet.incremental.settings import LoaderConfig, PlanSection, ReadSection, TablesSection  # noqa: E402
from lakeinlet.incremental.targets import SparkNeeds, every_format  # noqa: E402
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection  # noqa: E402
from lakeinlet.spark import SparkSection, get_session  # noqa: E402


@contextmanager
def stack(every: bool = False, log: str | None = None) -> Iterator[tuple[MotoServer, AwsSection, Any]]:
    """A moto server, its AwsSection and a Spark session wired to it (s3a; `every`: able to
    write every target format, as the tests' session; `log`: the server's access log file)."""
    for k, v in TEST_CREDENTIALS.items():
        os.environ[k] = v
    os.environ["PYSPARK_PYTHON"] = sys.executable
    with MotoServer(log=log) as server:
        aws = AwsSection(endpoint_url=server.endpoint)
        jars = os.environ.get("LAKEINLET_JARS") or str(ROOT / ".jars")
        needs = every_format() if every else SparkNeeds()
        spark = get_session(SparkSection(master="local[2]", jars=jars, shuffle_partitions=4),
                            server.endpoint, "lakeinlet-bench", ["s3a", *needs.groups], needs.conf)
        try:
            yield server, aws, spark
        finally:
            spark.stop()


def bucket(aws: AwsSection, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client("s3", aws).create_bucket(Bucket=name)
    return name


def put_many(aws: AwsSection, bucket_name: str, items: Sequence[tuple[str, bytes]],
             threads: int = 16) -> list[ObjectEvent]:
    """Upload in parallel; returns the created events S3 would have sent."""
    s3 = client("s3", aws, max_pool_connections=threads)

    def put(item: tuple[str, bytes]) -> ObjectEvent:
        key, body = item
        etag = s3.put_object(Bucket=bucket_name, Key=key, Body=body)["ETag"].strip('"')
        return ObjectEvent(bucket_name, key, "ObjectCreated:Put", datetime.now(UTC), len(body), etag)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(put, items))


def record(changelog: DeltaChangelog, events: Sequence[ObjectEvent]) -> int:
    batch = uuid.uuid4().hex[:8]
    now = datetime.now(UTC)
    return changelog.append([ReceivedEvent(e, f"{batch}-{i}", now, batch) for i, e in enumerate(events)],
                            {"poll_batch": batch})


def loader_config(aws: AwsSection, lake: str, table: str, fmt: str = "parquet", target: str = "delta",
                  iceberg_uri: str | None = None, schema: str = SCHEMA_DDL, **plan: Any) -> LoaderConfig:
    tables = TablesSection(changelog=f"s3a://{lake}/changelog", table=f"s3a://{lake}/{table}",
                           target_format=target)
    return LoaderConfig(tables=tables, read=ReadSection(source_format=fmt, schema=schema),
                        plan=PlanSection(**plan), iceberg=IcebergSection(iceberg_catalog_uri=iceberg_uri),
                        aws=aws)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out
