"""The producers' routes file (tests/data/producers/routes.toml) is what the sources page's worked
examples show and what tests/spark/test_producers.py loads: every route is shown, and each resolves
as `lakeinlet-load --routes` reads it, with the settings its producer needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lakeinlet.config import resolve
from lakeinlet.incremental import job
from lakeinlet.incremental.routes import routes_of
from lakeinlet.incremental.settings import LoaderConfig

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
ROUTES = ROOT / "tests" / "data" / "producers" / "routes.toml"


def test_every_producer_route_is_a_worked_example() -> None:
    shown = re.findall(r'--8<-- "tests/data/producers/routes.toml:(\w+)"',
                       (ROOT / "docs" / "concepts" / "sources.md").read_text(encoding="utf-8"))
    text = ROUTES.read_text(encoding="utf-8")
    sections = {name: text.split(f"[start:{name}]")[1].split(f"[end:{name}]")[0] for name in shown}
    in_docs = [n for body in sections.values() for n in re.findall(r'^name = "(\w+)"', body, re.M)]
    assert in_docs == re.findall(r'^name = "(\w+)"', text, re.M) != []


def test_the_producer_routes_resolve_with_their_producers_settings() -> None:
    argv = ["run", "--changelog", "s3a://lake/changelog", "--routes", str(ROUTES)]
    args = job.build_parser().parse_args(argv)
    routes = {r.name: r.config for r in routes_of(resolve(LoaderConfig, args, environ={}))}
    assert {name: c.read.source_format for name, c in routes.items()} == {
        "spark": "parquet", "kafka_orders": "json", "kafka_payments": "avro", "firehose": "json",
        "cloudtrail": "json", "alb": "text", "vpc_flow_logs": "parquet"}
    assert routes["cloudtrail"].plan.exclude_glob == ("*/CloudTrail-Digest/*",)
    assert routes["alb"].plan.exclude_glob == ("*ELBAccessLogTestFile",)
    assert routes["vpc_flow_logs"].tables.column_names == "rename"
    assert routes["vpc_flow_logs"].tables.partition_by == ("day",)
    assert not any(c.plan.include_hidden for c in routes.values())  # the artefact rule stays on
