"""The transform step end to end: CloudTrail documents exploded to one row per record (partitioned by
a column the transform makes), ALB access-log lines split into columns and nested JSON flattened by
a Python hook, in one drain of the three routes of docs/samples/shaping into each format; then, on
Delta alone (the step runs before any format's code), refusals at start-up, failing batches that
commit nothing, a fixed transform that loads the same batch, and a transform that keeps no rows."""

from __future__ import annotations

import gzip
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental.routes import RoutesSection, routes_of
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.transform_settings import TransformSection
from lakeinlet.incremental.wiring import build_routes
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]
SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples" / "shaping"
DATA = Path(__file__).resolve().parents[1] / "data" / "shaping"
TRAIL = "AWSLogs/123456789012/CloudTrail/us-east-1/2026/11/28/123456789012_CloudTrail_us-east-1_x.json.gz"
ALB = "alb/AWSLogs/123456789012/elasticloadbalancing/us-east-2/2026/11/28/app.my-loadbalancer.log"
PROFILES = "profiles/2026/11/28/profiles.jsonl"


def routes_config(aws: AwsSection, lake: str, target_format: str, tmp_path: Path) -> LoaderConfig:
    path = tmp_path / "routes.toml"
    path.write_text((SAMPLES / "routes.toml").read_text().replace("s3://lake/", f"s3a://{lake}/"))
    base = make_config(aws, lake, fmt="json", schema=None, target_format=target_format)
    return replace(base, tables=replace(base.tables, table=None), routes=RoutesSection(routes=str(path)))


def test_cloudtrail_alb_and_nested_json_shaped_in_one_drain(spark: Any, aws: AwsSection, target_format: str,
                                                            tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.syspath_prepend(str(SAMPLES))  # the hook's module, as a deployment puts it on PYTHONPATH
    landing, lake, s3 = new_lake(aws)
    config = routes_config(aws, lake, target_format, tmp_path)
    every = build_routes(config, routes_of(config), spark)
    record(every[0].changelog, [
        put(s3, landing, TRAIL, gzip.compress((DATA / "cloudtrail.json").read_bytes())),
        put(s3, landing, ALB, (DATA / "alb.log").read_bytes()),
        put(s3, landing, PROFILES, (DATA / "profiles.jsonl").read_bytes())])
    for p in every:
        p.loader().drain()
    by = {p.route: p for p in every}

    trail = sorted(target_rows(by["cloudtrail"]).to_pylist(), key=lambda r: r["event_time"])
    assert [(r["event_name"], r["aws_region"], r["user_arn"].rsplit("/", 1)[1]) for r in trail] == [
        ("GetObject", "us-east-1", "alice"), ("PutObject", "us-east-1", "alice"),
        ("DescribeInstances", "eu-west-1", "bob")]
    assert {(r["_source_key"], r["_source_bucket"]) for r in trail} == {(TRAIL, landing)}
    assert by["cloudtrail"].target.schema().names.count("aws_region") == 1

    alb = sorted(target_rows(by["alb"]).to_pylist(), key=lambda r: r["time"])
    assert [(r["type"], r["client_ip"], r["elb_status_code"], r["sent_bytes"], r["method"], r["url"],
             r["user_agent"]) for r in alb] == [
        ("http", "192.168.131.39", 200, 366, "GET", "http://www.example.com:80/", "curl/7.46.0"),
        ("https", "192.168.131.40", 404, 512, "GET", "https://www.example.com:443/missing?q=1",
         "Mozilla/5.0 (X11; Linux x86_64)"),
        ("h2", "203.0.113.5", 502, 0, "POST", "https://www.example.com:443/api/orders",
         "python-requests/2.31")]
    assert alb[0]["time"].isoformat().startswith("2026-11-28T06:01:00.186641")

    profiles = sorted(target_rows(by["profiles"]).to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["user_name"], r["user_address_city"], r["user_address_zip"], r["tags"])
            for r in profiles] == [(1, "ada", "London", "N1", ["a", "b"]),
                                   (2, "grace", "Arlington", "22201", [])]
    assert "user" not in by["profiles"].target.schema().names

    ledgers = {name: [(r["key"], r["status"], r["rows"], r["reason"]) for r in ledger_rows(p)]
               for name, p in by.items()}
    assert ledgers == {  # `rows` are the rows read; the reason says what the transform made of them
        "cloudtrail": [(TRAIL, "loaded", 1, "the transform wrote 3 rows of the 1 read")],
        "alb": [(ALB, "loaded", 3, "")], "profiles": [(PROFILES, "loaded", 2, "")]}


def test_transform_refusals_failures_a_fix_and_no_rows(spark: Any, aws: AwsSection, tmp_path: Path,
                                                       monkeypatch: Any, caplog: Any) -> None:
    monkeypatch.syspath_prepend(str(SAMPLES))
    landing, lake, s3 = new_lake(aws)
    base = make_config(aws, lake, fmt="json", schema=None)

    def shaped(sql: str | None = None, hook: str | None = None, schema: str | None = None) -> Any:
        return parts(replace(base, read=replace(base.read, schema=schema),
                             transform=TransformSection(sql, hook)), spark)

    with pytest.raises(ConfigError) as dropped:  # analysed at start-up against --schema's columns
        shaped("SELECT id FROM source", schema="id BIGINT, payload STRING").loader()
    assert "drops the lineage columns _source_bucket, _source_key" in str(dropped.value)
    with pytest.raises(ConfigError) as garbled:  # a parse error needs no schema
        shaped("SELEC * FROM source").loader()
    assert "transform --transform-sql 'SELEC * FROM source'" in str(garbled.value)

    record(base_changelog := parts(base, spark).changelog, [
        put(s3, landing, PROFILES, (DATA / "profiles.jsonl").read_bytes())])
    failing = [("SELECT *, assert_true(id > 5) AS checked FROM source", None, "is not true"),
               ("SELECT nope, _source_bucket FROM source", None, "nope"),
               (None, "bad_hooks:drop_key", "drops the lineage column _source_key"),
               (None, "bad_hooks:move_key", "2 of its rows name s3://x/y, which this batch did not read"),
               (None, "bad_hooks:nothing", "returned a NoneType, not a Spark DataFrame")]
    monkeypatch.syspath_prepend(str(DATA))
    for sql, hook, said in failing:
        p = shaped(sql, hook)
        with pytest.raises(TerminalError) as failed:
            p.loader().drain()
        line = str(failed.value)
        assert "\n" not in line and line.startswith("transform ") and " failed on batch v0 (" in line, line
        assert said in line and "nothing was committed" in line, line
        assert p.target.checkpoint().position is None and p.ledger.last_target_version() == -1

    fixed = shaped("SELECT id, from_json(payload, 'score INT').score AS score, "
                   "_source_bucket, _source_key, _source_etag, _source_event_time, _ingest_batch FROM source")
    fixed.loader().drain()
    assert sorted((r["id"], r["score"]) for r in target_rows(fixed).to_pylist()) == [(1, 7), (2, 9)]
    assert (fixed.target.checkpoint().transform or "").startswith("SELECT id, from_json(payload")

    record(base_changelog, [put(s3, landing, "profiles/later.jsonl", b'{"id": 3, "payload": "{}"}\n')])
    retyped = shaped("SELECT id, 'high' AS score, _source_bucket, _source_key, _source_etag, "
                     "_source_event_time, _ingest_batch FROM source")
    with pytest.raises(TerminalError, match=r"failed on batch v1 .*its column 'score' is int in the table "
                                            r"but string in its rows: cast it in the transform"):
        retyped.loader().drain()
    caplog.clear()
    none = shaped("SELECT * FROM source WHERE id < 0")
    before = none.target.checkpoint()
    with caplog.at_level(logging.WARNING, logger="lakeinlet"):
        none.loader().drain()
    assert [r.getMessage() for r in caplog.records if "transform" in r.getMessage()] == ["transform changed"]
    assert none.target.checkpoint().position.complete == before.position.complete + 1
    assert len(target_rows(none)) == 2
    later = [(r["rows"], r["reason"]) for r in ledger_rows(none) if r["key"] == "profiles/later.jsonl"]
    assert later == [(1, "the transform wrote 0 rows of the 1 read")]
