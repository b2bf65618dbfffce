"""`--schema-hints`: hinted columns of JSON and CSV take the hinted types value by value, the others
are inferred; a value that does not cast sets its object aside (or, rescued, goes to
`_rescued_data`); a hinted column the files lack is added, null (Delta; the read path is the same
for every target format)."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]
HINTS = "price DECIMAL(10,2), ts TIMESTAMP, note STRING"


def _lines(*rows: dict[str, Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _hinted(aws: AwsSection, lake: str, fmt: str, conflict: str, hints: str = HINTS) -> Any:
    config = make_config(aws, lake, fmt=fmt, schema=None, table=f"s3a://{lake}/{fmt}_orders",
                         suffix=(f".{fmt}",))
    return replace(config, read=replace(config.read, schema_hints=hints, on_type_conflict=conflict))


def test_hinted_json_and_csv_cast_value_by_value_set_aside_or_rescue_what_does_not_cast(
        spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    js = parts(_hinted(aws, lake, "json", "quarantine"), spark)
    record(js.changelog, [
        put(s3, landing, "j1.json", _lines({"id": 1, "price": "12.50", "ts": "2026-11-28T10:00:00Z"},
                                           {"id": 2, "price": "3.10", "ts": "2026-11-28T11:30:00Z"})),
        put(s3, landing, "j2.json", _lines({"id": 3, "price": 7.25, "ts": "2026-11-28T12:00:00Z"})),
        put(s3, landing, "j3.json", _lines({"id": 4, "price": "n/a", "ts": "2026-11-28T13:00:00Z"},
                                           {"id": 6, "price": "1", "ts": "soon"}))])
    js.loader().drain()  # the batch that creates the table
    record(js.changelog, [put(s3, landing, "j4.json", _lines({"id": 5, "price": "1.99"}))])
    js.loader().drain()  # text against the table's decimal: cast, not a conflict; ts lacking: null
    csv = parts(_hinted(aws, lake, "csv", "rescue", f"{HINTS}, meta STRUCT<src: STRING>"), spark)
    record(csv.changelog, [
        put(s3, landing, "c1.csv", b'id,price,ts,meta\n1,12.50,2026-11-28T10:00:00Z,"{\\"src\\":\\"web\\"}"\n'
                                   b"2,3.10,2026-11-28T11:30:00Z,\n"),
        put(s3, landing, "c2.csv", b"id,price,ts,meta\n3,n/a,2026-11-28T12:00:00Z,n/a\n")])
    csv.loader().drain()

    ledger = {r["key"]: r for p, fmt in ((js, ".json"), (csv, ".csv")) for r in ledger_rows(p)
              if r["key"].endswith(fmt)}
    assert {k: r["status"] for k, r in ledger.items()} == {
        "j1.json": "loaded", "j2.json": "loaded", "j3.json": "schema_conflict", "j4.json": "loaded",
        "c1.csv": "loaded", "c2.csv": "loaded"}
    assert ledger["j3.json"]["reason"].startswith(  # every column of the object whose values do not cast
        "type conflict: column 'price' is decimal(10,2) by --schema-hints but a string value in the "
        "object does not cast to it; column 'ts' is timestamp by --schema-hints but a string value in "
        f"the object does not cast to it (s3a://{landing}/j3.json). To load it: fix the values")
    assert "2 fields rescued into _rescued_data" in ledger["c2.csv"]["reason"]  # text that is no object too
    assert "rescued" not in ledger["c1.csv"]["reason"]

    table = target_rows(js)
    assert {n: str(table.schema.field(n).type) for n in ("price", "ts")} == {
        "price": "decimal128(10, 2)", "ts": "timestamp[us, tz=UTC]"}
    assert str(table.schema.field("note").type).startswith("string")  # hinted, in no file: added
    rows = sorted(table.select(["id", "price", "ts", "note"]).to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["price"], r["ts"] and r["ts"].isoformat(), r["note"]) for r in rows] == [
        (1, Decimal("12.50"), "2026-11-28T10:00:00+00:00", None),
        (2, Decimal("3.10"), "2026-11-28T11:30:00+00:00", None),
        (3, Decimal("7.25"), "2026-11-28T12:00:00+00:00", None),
        (5, Decimal("1.99"), None, None)]
    table = target_rows(csv)
    assert str(table.schema.field("price").type) == "decimal128(10, 2)"
    rows = sorted(table.select(["id", "price", "ts", "meta", "_rescued_data"]).to_pylist(),
                  key=lambda r: r["id"])
    assert [(r["id"], r["price"], r["ts"].isoformat(), r["meta"], r["_rescued_data"] and json.loads(
        r["_rescued_data"])) for r in rows] == [
        ("1", Decimal("12.50"), "2026-11-28T10:00:00+00:00", {"src": "web"}, None),
        ("2", Decimal("3.10"), "2026-11-28T11:30:00+00:00", None, None),
        ("3", None, "2026-11-28T12:00:00+00:00", None, {"price": "n/a", "meta": "n/a"})]
