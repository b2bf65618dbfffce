"""Framing of JSON objects as producers write them: Kafka Connect's JSON-gzip under `partition=N`
(its partition a column), a top-level array (each element a row under multiLine=true; set aside
naming the option without it, when it spans lines) and CloudTrail's `{"Records": [...]}` document
(one row holding every record, never fewer)."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]

CLOUDTRAIL = ("AWSLogs/123456789012/CloudTrail/eu-west-1/2026/11/27/"
              "123456789012_CloudTrail_eu-west-1_20261127T0905Z_a.json.gz")
EVENTS = [{"eventName": n, "eventSource": "s3.amazonaws.com"}
          for n in ("PutObject", "GetObject", "DeleteObject")]
ARRAY = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())


def _load(spark: Any, aws: AwsSection, objects: dict[str, bytes],
          *options: str) -> tuple[dict[str, Any], Any]:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, "json", schema=None, prefix=("topics/orders/", "AWSLogs/", "doc/"))
    p = parts(replace(config, read=replace(config.read, read_option=options)), spark)
    record(p.changelog, [put(s3, landing, k, b) for k, b in objects.items()])
    p.loader().drain()
    return {r["key"]: r for r in ledger_rows(p)}, target_rows(p).to_pylist()


def test_producers_json_framing_every_record_or_a_reason(spark: Any, aws: AwsSection) -> None:
    ledger, rows = _load(spark, aws, {
        "topics/orders/partition=0/orders+0+0000000000.json.gz": _lines([{"order_id": 1}, {"order_id": 2}]),
        "topics/orders/partition=1/orders+1+0000000000.json.gz": _lines([{"order_id": 3}]),
        CLOUDTRAIL: gzip.compress(json.dumps({"Records": EVENTS}).encode()),
        "doc/one-line-array.json": json.dumps(ARRAY[:2]).encode() + b"\n",
        "doc/pretty-array.json": json.dumps(ARRAY, indent=2).encode()})
    assert {k: (r["status"], r["rows"]) for k, r in ledger.items() if k != "doc/pretty-array.json"} == {
        "topics/orders/partition=0/orders+0+0000000000.json.gz": ("loaded", 2),
        "topics/orders/partition=1/orders+1+0000000000.json.gz": ("loaded", 1),
        CLOUDTRAIL: ("loaded", 1), "doc/one-line-array.json": ("loaded", 2)}
    pretty = ledger["doc/pretty-array.json"]
    assert pretty["status"] == "corrupt" and "set --read-option multiLine=true" in pretty["reason"]
    assert sorted((r["order_id"], r["partition"]) for r in rows if r["order_id"] is not None) == [
        (1, "0"), (2, "0"), (3, "1")]
    trail = [r for r in rows if r["Records"] is not None]
    assert [[e["eventName"] for e in r["Records"]] for r in trail] == [[e["eventName"] for e in EVENTS]]
    assert sorted(r["id"] for r in rows if r["id"] is not None) == [1, 2]

    ledger, rows = _load(spark, aws, {
        "doc/pretty-array.json": json.dumps(ARRAY, indent=2).encode(),
        CLOUDTRAIL: gzip.compress(json.dumps({"Records": EVENTS}, indent=2).encode())}, "multiLine=true")
    assert {k: (r["status"], r["rows"]) for k, r in ledger.items()} == {
        "doc/pretty-array.json": ("loaded", 3), CLOUDTRAIL: ("loaded", 1)}
    assert sorted(r["id"] for r in rows if r["id"] is not None) == [1, 2, 3]
    assert [len(r["Records"]) for r in rows if r["Records"] is not None] == [3]
