"""The producers' corpus (tests/data/producers/): a Spark job's classic and magic commits, Kafka
Connect JSON-gzip and Avro, Firehose, CloudTrail, ALB and VPC flow logs, loaded by one routes run per
drain into each target format and read back by another engine: every data row once, every artefact
`filtered` with its reason, the partition columns the keys give, what cannot load set aside."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.job import main
from lakeinlet.incremental.routes import RoutesSection, routes_of
from lakeinlet.incremental.settings import LoaderConfig, TablesSection
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from tests.conftest import unique
from tests.data.producers import alb, cloudtrail, firehose, kafka_connect, spark_commits, vpc_flow_logs
from tests.data.producers.commit_gate import CommitGate
from tests.data.producers.corpus import Produced, notified
from tests.spark.conftest import ICEBERG_URI_ENV
from tests.spark.loader_helpers import ledger_rows, make_config, parts, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]

ROUTES = Path(__file__).resolve().parents[1] / "data" / "producers" / "routes.toml"


@pytest.fixture(scope="module")
def corpus(moto_server: MotoServer) -> list[Produced]:
    """A landing bucket holding every producer's output but Spark's, written once for all formats."""
    s3 = client("s3", AwsSection(endpoint_url=moto_server.endpoint))
    landing = _versioned(s3, "producers")
    return [kafka_connect.json_gzip(s3, landing), kafka_connect.avro(s3, landing),
            firehose.streams(s3, landing), cloudtrail.trail(s3, landing), alb.access_logs(s3, landing),
            vpc_flow_logs.flow_logs(s3, landing)]


@pytest.fixture(scope="module")
def gate(moto_server: MotoServer) -> Iterator[CommitGate]:
    with CommitGate(moto_server.endpoint) as held:
        yield held


@pytest.fixture(scope="module")
def spark_jobs() -> list[Produced]:
    """The Spark jobs' output, once the first format's test ran them (the others replay its events:
    the task-side keys are judged by name, never read, so the target format cannot change them)."""
    return []


def _versioned(s3: Any, name: str) -> str:
    bucket = unique(name)
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return bucket


def test_every_producer_loads_each_row_once_and_no_artefact(
        spark: Any, aws: AwsSection, corpus: list[Produced], spark_jobs: list[Produced], gate: CommitGate,
        target_format: str, tmp_path: Path) -> None:
    """The first format's loader drains while the Spark jobs' commits are held; the others replay."""
    s3, lake = client("s3", aws), unique("lake")
    s3.create_bucket(Bucket=lake)
    routes = tmp_path / "routes.toml"
    routes.write_text(ROUTES.read_text().replace("s3a://lake/", f"s3a://{lake}/"))
    changelog = parts(make_config(aws, lake), spark).changelog
    flags = ["--changelog", f"s3a://{lake}/changelog", "--routes", str(routes), "--target-format",
             target_format, "--endpoint-url", aws.endpoint_url or "", "--master", "local[2]"]

    def drain(events: list[ObjectEvent]) -> None:
        record(changelog, notified(events))
        assert main(["run", "--drain", *flags]) == 0

    first = [e for p in corpus for e in p.commits[0]]
    if spark_jobs:
        drain([*spark_jobs[0].commits[0], *first])
    else:
        spark_jobs.append(spark_commits.race(spark, s3, _versioned(s3, "spark"), gate,
                                             lambda racing: drain([*racing, *first])))
    drain([*spark_jobs[0].commits[1], *(e for p in corpus if len(p.commits) > 1 for e in p.commits[1])])
    produced = [*spark_jobs, *corpus]

    tables = TablesSection(changelog=f"s3a://{lake}/changelog", target_format=target_format)
    config = LoaderConfig(tables=tables,
                          aws=aws, iceberg=IcebergSection(iceberg_catalog_uri=os.environ[ICEBERG_URI_ENV]),
                          routes=RoutesSection(routes=str(routes)))
    routed = {r.name: parts(r.config, spark) for r in routes_of(config)}
    for p in produced:
        _ledger_as_produced(p, ledger_rows(routed[p.route]))
        _rows_as_produced(p, target_rows(routed[p.route]).to_pylist())


def _ledger_as_produced(p: Produced, ledger: list[dict[str, Any]]) -> None:
    statuses: dict[str, set[str]] = defaultdict(set)
    reasons: dict[str, list[str]] = defaultdict(list)
    for row in ledger:
        statuses[row["key"]].add(row["status"])
        reasons[row["key"]].append(row["reason"] or "")
    want: dict[str, set[str]] = defaultdict(set)
    for key in p.loaded:
        want[key].add("loaded")
    for key in p.filtered:
        want[key].add("filtered")
    for key, (status, _) in p.set_aside.items():
        want[key].add(status)
    assert dict(statuses) == dict(want), p.route
    for key, phrase in [*p.filtered.items(), *((k, why) for k, (_, why) in p.set_aside.items())]:
        assert any(phrase in r for r in reasons[key]), (p.route, key, reasons[key])


def _rows_as_produced(p: Produced, rows: list[dict[str, Any]]) -> None:
    columns = sorted(p.rows[0])
    assert sorted(c for c in rows[0] if not c.startswith("_")) == columns, p.route  # partition columns too
    assert Counter(_canon(r, columns) for r in rows) == Counter(_canon(r, columns) for r in p.rows), p.route


def _canon(row: dict[str, Any], columns: list[str]) -> str:
    """A row as comparable text: a struct's null fields dropped (another file may have them)."""
    return json.dumps([_strip(row.get(c)) for c in columns], sort_keys=True, default=str)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value
