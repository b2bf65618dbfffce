"""Hostile input, loader part (issue 35): one batch holding keys Hadoop's Path rewrites, a foreign
and an invalid bucket, and objects under lakeinlet's own tables beside good objects loads the good
ones in that run, records each bad one with its reason, and reads nothing outside its bounds."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.model import PlannedObject
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def named(bucket: str, key: str, like: ObjectEvent) -> ObjectEvent:
    """An event naming bucket/key with `like`'s size and etag (what a forged or odd event says)."""
    return ObjectEvent(bucket, key, "ObjectCreated:Put", datetime.now(UTC), like.size, like.etag)


def test_a_hostile_batch_loads_its_good_objects_and_sets_each_bad_one_aside(spark: Any,
                                                                            aws: AwsSection) -> None:
    landing, foreign, s3 = new_lake(aws)  # the lake lives in the landing bucket
    good = [put(s3, landing, f.key, f.body) for f in make_files("parquet", 2, 3, prefix="in/")]
    private, table_file, ledger_file, elsewhere = (
        put(s3, bucket, f.key, f.body) for bucket, f in (
            (landing, make_files("parquet", 1, 3, "private/", start=7)[0]),
            (landing, make_files("parquet", 1, 3, "orders/", start=8)[0]),
            (landing, make_files("parquet", 1, 3, "orders_ledger/", start=9)[0]),
            (foreign, make_files("parquet", 1, 3, "in/", start=6)[0])))
    p = parts(make_config(aws, landing, buckets=(landing,)), spark)
    record(p.changelog, good)  # the changelog's first commit: its own Parquet file is in the bucket now
    own_part = next(o["Key"] for o in s3.list_objects_v2(Bucket=landing, Prefix="changelog/")["Contents"]
                    if o["Key"].endswith(".parquet"))
    bad = {  # key → what its ledger reason says
        "in/../private/part-00007.parquet": "`..` segment: Hadoop's Path would read `private/part-00007",
        "in//y.parquet": "an empty segment (`//`)", "./in/part-00000.parquet": "a `.` segment",
        "in/./z.parquet": "a `.` segment", "in/dir/": "a trailing `/`",
        f"{foreign}/in/part-00006.parquet": f"bucket not in --bucket ({landing})",
        "Bad Bucket/in/a.parquet": "invalid bucket name 'Bad Bucket'",
        own_part: f"lakeinlet's own table s3://{landing}/changelog/",
        table_file.key: f"lakeinlet's own table s3://{landing}/orders/",
        ledger_file.key: f"lakeinlet's own table s3://{landing}/orders_ledger/"}
    events = [named(landing, k, private) for k in list(bad)[:5]]
    events += [elsewhere, named("Bad Bucket", "in/a.parquet", private), table_file, ledger_file,
               named(landing, own_part, private)]
    record(p.changelog, events)
    summary = p.loader().drain()
    ledger = {r["key"] if r["bucket"] == landing else f"{r['bucket']}/{r['key']}": r for r in ledger_rows(p)}
    assert {e.key: (ledger[e.key]["status"], ledger[e.key]["rows"]) for e in good} == {
        e.key: ("loaded", 3) for e in good}
    for key, why in bad.items():
        assert (ledger[key]["status"], ledger[key]["rows"]) == ("filtered", 0), key
        assert why in ledger[key]["reason"], (key, ledger[key]["reason"])
    rows = target_rows(p)
    assert sorted(rows.column("_source_key").to_pylist()) == sorted(e.key for e in good for _ in range(3))
    assert sorted(rows.column("order_id").to_pylist()) == [n * 1_000_000 + i for n in (0, 1)
                                                           for i in range(3)]
    assert summary.batches == 1  # both changelog commits in one batch: nothing failed or waited

    # The reader judges each object too (a key that reached it past the bounds): a rewritten path
    # is never read under another key, and an object whose read cannot be planned is set aside alone.
    def planned(bucket: str, key: str) -> PlannedObject:
        return PlannedObject(bucket, key, None, None, 1, f"direct-{key}", datetime.now(UTC), 9)

    batch = p.reader().read([planned(landing, "in//part-00001.parquet"), planned("Bad_Bucket", "a.parquet"),
                             planned(landing, good[0].key)], "direct", None)
    try:
        assert batch.rows == {(landing, good[0].key): 3}
        status, reason = batch.failed[(landing, "in//part-00001.parquet")]
        assert (status, reason.split(":")[0]) == ("filtered", "Hadoop's Path reads s3")
        assert f"s3://{landing}/in/part-00001.parquet for this key" in reason
        status, reason = batch.failed[("Bad_Bucket", "a.parquet")]
        assert status in ("missing", "corrupt"), reason
        assert reason.startswith("Spark cannot plan a read of it: "), reason
    finally:
        batch.release()
