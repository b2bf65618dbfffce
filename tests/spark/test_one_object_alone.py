"""One odd object never fails its batch: each trigger is judged alone, gets its ledger row with
the error's root cause, and the good objects of the same batch load in the same run."""

from __future__ import annotations

import io
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]
ZSTD = pa.compress(b'{"order_id":1}\n', "zstd", asbytes=True)


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _load(spark: Any, aws: AwsSection, fmt: str, schema: str | None,
          objects: dict[str, bytes]) -> tuple[dict[str, tuple[str, int, str]], Any]:
    """One batch of `objects` (in this order) beside a good object of `fmt`, drained."""
    landing, lake, s3 = new_lake(aws)
    good = make_files(fmt, 1, 2)[0]
    p = parts(make_config(aws, lake, fmt, schema=schema), spark)
    record(p.changelog, [put(s3, landing, k, b) for k, b in {good.key: good.body, **objects}.items()])
    p.loader().drain()
    ledger = {r["key"]: (r["status"], r["rows"], r["reason"]) for r in ledger_rows(p)}
    assert ledger[good.key][:2] == ("loaded", 2)
    return ledger, target_rows(p)


def test_every_trigger_in_one_batch_gets_its_row_and_the_good_objects_load(
        spark: Any, aws: AwsSection) -> None:
    found, rows = _load(spark, aws, "json", None, {
        "dot/a.json": b'{"order_id":11,"price.usd":2.5}\n',
        "case/twice.json": b'{"order_id":12,"ORDER_ID":13}\n',
        "case/Across.json": b'{"order_id":14,"Customer":"z"}\n',
        "gz/not-gzip.json.gz": b'{"order_id":15}\n', "zst/a.json.zst": ZSTD})
    assert found["dot/a.json"][:2] == ("loaded", 1) and 2.5 in rows.column("price.usd").to_pylist()
    twice, across = found["case/twice.json"], found["case/Across.json"]
    not_gzip = found["gz/not-gzip.json.gz"]
    assert twice[0] == "corrupt" and "COLUMN_ALREADY_EXISTS" in twice[2] and "rename" in twice[2]
    assert across[0] == "schema_conflict" and "`Customer` differs only in case from `customer`" in across[2]
    assert not_gzip[0] == "corrupt" and "not a gzip file" in not_gzip[2] and "\n" not in not_gzip[2]
    assert found["zst/a.json.zst"][0] == "loaded"  # on 3.5 too: a Java zstd codec, no libhadoop needed
    assert sorted(rows.column("order_id").to_pylist())[-1] == 11

    found, rows = _load(spark, aws, "json", "order_id BIGINT, customer STRING",  # fail in Spark's job
                        {"gz/not-gzip.json.gz": b'{"order_id":15}\n', "zst/a.json.zst": ZSTD})
    not_gzip = found["gz/not-gzip.json.gz"]
    assert not_gzip[0] == "corrupt" and "not a gzip file" in not_gzip[2]
    assert found["zst/a.json.zst"][0] == "loaded"

    ns = pa.table({"order_id": [21], "ts": pa.array([datetime(2026, 1, 1)], pa.timestamp("ns"))})
    found, rows = _load(spark, aws, "parquet", None, {
        "ns/a.parquet": _parquet(ns), "dot/a.parquet": _parquet(pa.table({"order_id": [22], "a.b": [1.5]}))})
    assert found["dot/a.parquet"][:2] == ("loaded", 1) and 1.5 in rows.column("a.b").to_pylist()
    assert found["ns/a.parquet"][0] == "corrupt" and "coerce_timestamps='us'" in found["ns/a.parquet"][2]
