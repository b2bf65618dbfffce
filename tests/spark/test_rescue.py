"""`--on-type-conflict rescue`: values the table's types cannot hold are kept in `_rescued_data`
and their rows loaded; a strict schema's unknown columns likewise (JSON; the read path is the
same for every target format)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _lines(*rows: dict[str, Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_rescued_values_keep_their_rows_in_a_first_batch_a_later_one_and_under_strict(
        spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, fmt="json", schema=None)
    config = replace(config, read=replace(config.read, on_type_conflict="rescue"))
    p = parts(config, spark)
    record(p.changelog, [put(s3, landing, "a1.json", _lines({"id": 1, "price": 1.5, "name": "a"},
                                                            {"id": 2, "price": 2.5, "name": "b"}))])
    record(p.changelog, [put(s3, landing, "a2.json", _lines({"id": 3, "price": "cheap", "name": "c"}))])
    p.loader().drain(max_batches=1)  # one batch of both: a first batch whose types disagree
    record(p.changelog, [put(s3, landing, "b.json", _lines({"id": 4, "price": "n/a", "name": "d"},
                                                           {"id": 5, "price": 3.5, "name": "e"})),
                         put(s3, landing, "c.json", _lines({"id": "x6", "price": 4.5,
                                                            "name": {"first": "f"}}))])
    p.loader().drain()
    strict = replace(config, read=replace(config.read, schema_mode="strict"))
    record(p.changelog, [put(s3, landing, "d.json", _lines({"id": 7, "price": 5.5, "name": "g",
                                                            "extra": [1, 2]}))])
    parts(strict, spark).loader().drain()

    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert {k: r["status"] for k, r in ledger.items()} == dict.fromkeys(
        ["a1.json", "a2.json", "b.json", "c.json", "d.json"], "loaded")
    assert {k: r["rows"] for k, r in ledger.items()} == {
        "a1.json": 2, "a2.json": 1, "b.json": 2, "c.json": 1, "d.json": 1}
    assert "1 field rescued into _rescued_data" in ledger["a2.json"]["reason"]
    assert "1 field rescued into _rescued_data" in ledger["b.json"]["reason"]
    assert "1 field rescued into _rescued_data" in ledger["c.json"]["reason"]
    assert "1 field rescued into _rescued_data" in ledger["d.json"]["reason"]
    assert "rescued" not in ledger["a1.json"]["reason"]

    table = target_rows(p)
    assert "extra" not in table.schema.names and "_lakeinlet_rescued" not in table.schema.names
    assert str(table.schema.field("price").type) == "double"
    rows = sorted(table.select(["id", "price", "name", "_rescued_data"]).to_pylist(),
                  key=lambda r: r["name"])
    got = [(r["id"], r["price"], r["name"], json.loads(r["_rescued_data"]) if r["_rescued_data"] else None)
           for r in rows]
    assert got == [  # by name: '{' sorts after letters
        (1, 1.5, "a", None), (2, 2.5, "b", None), (3, None, "c", {"price": "cheap"}),
        (4, None, "d", {"price": "n/a"}), (5, 3.5, "e", None),
        (7, 5.5, "g", {"extra": "[1,2]"}), (None, 4.5, '{"first":"f"}', {"id": "x6"})]
