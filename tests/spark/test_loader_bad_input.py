"""Bad input gets a ledger row each and never fails the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.samples import make_files
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]
DATA = Path(__file__).resolve().parents[1] / "data" / "loader"


def _ledger(p: Any) -> dict[str, tuple[str, int, str]]:
    return {r["key"]: (r["status"], r["rows"], r["reason"]) for r in ledger_rows(p)}


def test_bad_parquet_inputs_each_get_a_ledger_row(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    good = make_files("parquet", 2, 3)
    events = [put(s3, landing, f.key, f.body) for f in good]
    events.append(put(s3, landing, "parquet/corrupt.parquet", (DATA / "corrupt.parquet").read_bytes()))
    events.append(put(s3, landing, "parquet/empty.parquet", b""))
    gone = put(s3, landing, "parquet/gone.parquet", good[0].body)
    s3.delete_object(Bucket=landing, Key="parquet/gone.parquet")
    big = put(s3, landing, "parquet/big.parquet", make_files("parquet", 1, 400, start=9)[0].body)
    p = parts(make_config(aws, lake, max_bytes=4000), spark)
    record(p.changelog, [*events, gone, big])
    summary = p.loader().drain()
    ledger = _ledger(p)
    assert ledger[good[0].key][:2] == ("loaded", 3) and ledger[good[1].key][:2] == ("loaded", 3)
    assert ledger["parquet/corrupt.parquet"][0] == "corrupt"
    assert ledger["parquet/corrupt.parquet"][2]  # the error text is kept
    assert ledger["parquet/empty.parquet"][:2] == ("loaded", 0)
    assert ledger["parquet/gone.parquet"][0] == "missing"
    assert ledger["parquet/big.parquet"][0] == "too_large"
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in good for r in f.rows)
    assert summary.batches >= 1


def test_json_garbage_lines_are_dropped_and_counted(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    mixed = put(s3, landing, "json/mixed.jsonl", (DATA / "garbage_lines.jsonl").read_bytes())
    allbad = put(s3, landing, "json/allbad.jsonl", b"not json\n{broken\n")
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [mixed, allbad])
    p.loader().drain()
    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert (ledger["json/mixed.jsonl"]["status"], ledger["json/mixed.jsonl"]["rows"],
            ledger["json/mixed.jsonl"]["bad_records"]) == ("loaded", 3, 2)
    assert ledger["json/allbad.jsonl"]["status"] == "corrupt"
    assert sorted(target_rows(p).column("order_id").to_pylist()) == [1, 2, 3]


class LyingStore(S3ObjectStore):
    """HEAD says the object is there; it is deleted before Spark reads it."""

    def head_many(self, objs: Any) -> Any:
        heads = super().head_many(objs)
        for o in objs:
            self.s3.delete_object(Bucket=o.bucket, Key=o.key)
        return heads


def test_object_deleted_between_head_and_read_is_missing(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    f = make_files("parquet", 1, 2)[0]
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body)])
    loader = p.loader()
    loader.store = LyingStore(aws)
    loader.drain()
    assert _ledger(p)[f.key][0] == "missing"
