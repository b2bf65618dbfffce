"""The acceptance suite, once per target format (Delta, Hudi, Iceberg) and again with every fast path
off (the plain paths they shadow): Spark local[2], moto over s3a, rows read back by a different engine
(delta-rs, hudi-rs, pyiceberg) and by Spark."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet import fast_paths
from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files, make_rows
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.job import main
from lakeinlet.incremental.model import Position, Watermark
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parquet_bytes,
    parts,
    put,
    record,
    spark_rows,
    target_rows,
    upload,
)
from tests.targets import CRASH_POINTS, Crash, crashing

pytestmark = [pytest.mark.spark, pytest.mark.integration]
NOW = datetime.now(UTC)


@pytest.fixture(autouse=True, params=["fast", "plain"])
def paths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test with lakeinlet's fast paths on, then with every one off."""
    monkeypatch.setenv(fast_paths.VARIABLE, "on" if request.param == "fast" else "off")
    return str(request.param)


def ids(table: pa.Table) -> list[int]:
    return sorted(table.column("order_id").to_pylist())


def test_end_to_end_exactly_once_read_by_two_engines(spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("json", 4, rows_per_file=3)
    events = upload(s3, landing, files)
    p = parts(make_config(aws, lake, "json", target_format=target_format, max_files=3), spark)
    record(p.changelog, events[:2])
    record(p.changelog, events[2:] + events[:1])  # a duplicate notification in a later commit
    p.loader().drain()
    newer = make_files("json", 1, 2, start=9)[0]
    overwrite = put(s3, landing, files[0].key, newer.body)  # same key, new bytes and etag
    record(p.changelog, [overwrite])
    record(p.changelog, [overwrite, events[0]])  # both versions redelivered later
    p.loader().drain()
    table = target_rows(p)
    assert ids(table) == sorted(r["order_id"] for f in [*files, newer] for r in f.rows)
    lineage = Counter(zip(table.column("_source_key").to_pylist(), table.column("_source_etag").to_pylist(),
                          strict=True))
    assert lineage == {(e.key, e.etag): 3 for e in events} | {(files[0].key, overwrite.etag): 2}
    assert set(table.column("_source_bucket").to_pylist()) == {landing}
    assert None not in table.column("_ingest_batch").to_pylist()
    assert spark_rows(spark, p).count() == table.num_rows
    loaded = sorted((r["key"], r["etag"], r["rows"]) for r in ledger_rows(p) if r["status"] == "loaded")
    assert loaded == sorted([(e.key, e.etag, 3) for e in events] + [(files[0].key, overwrite.etag, 2)])
    assert p.target.checkpoint().position == Position(3)
    newest = p.target.commits(1)[0].watermark  # freshness: the newest event the loads covered
    assert newest == Watermark(max(e.event_time for e in [*events, overwrite]), 3)


def test_a_crash_at_every_step_then_a_rerun_loads_exactly_once(spark: Any, aws: AwsSection,
                                                               target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, target_format=target_format, max_files=2), spark)
    steps = list(CRASH_POINTS)
    files = make_files("parquet", 2 * len(steps), 2)
    expected: list[int] = []
    for i, step in enumerate(steps):
        pair = files[2 * i:2 * i + 2]
        events = upload(s3, landing, pair)
        record(p.changelog, [*events, events[0]])  # with a duplicate notification
        with pytest.raises(Crash):
            crashing(p.loader(), step).run_batch()
        p.loader().drain()
        expected += [r["order_id"] for f in pair for r in f.rows]
        assert ids(target_rows(p)) == sorted(expected), step
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}


def test_reset_back_and_forward_and_backfill(spark: Any, aws: AwsSection, target_format: str,
                                             capsys: Any) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 6, 2)
    p = parts(make_config(aws, lake, target_format=target_format), spark)
    for f in files[:3]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])  # versions 0, 1, 2
    p.loader().drain()
    flags = ["--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders", "--schema",
             SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or "", "--target-format", target_format]
    assert main(["checkpoint", "reset", "--to-version", "1", "--reason", "replay", *flags]) == 0
    assert p.target.checkpoint().position == Position(0)
    p.loader().drain()  # re-reads versions 1 and 2: their objects are in the ledger, nothing doubles
    assert ids(target_rows(p)) == sorted(r["order_id"] for f in files[:3] for r in f.rows)
    for f in files[3:5]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])  # versions 3, 4
    assert main(["checkpoint", "reset", "--to-latest", "--reason", "skip", *flags]) == 0
    put(s3, landing, files[5].key, files[5].body)  # no notification for this one
    assert main(["backfill", "--bucket", landing, *flags]) == 0
    assert main(["backfill", "--bucket", landing, *flags]) == 0
    assert "appended 0 synthetic events" in capsys.readouterr().out
    p.loader().drain()
    table = target_rows(p)
    assert ids(table) == sorted(r["order_id"] for f in [*files[:3], files[5]] for r in f.rows)
    reasons = [c.meta.get("reason") for c in p.target.commits() if c.operation == "checkpoint-reset"]
    assert reasons == ["skip", "replay"]




def test_bad_inputs_are_recorded_and_the_rest_loads(spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, schema=None, target_format=target_format), spark)
    record(p.changelog, [put(s3, landing, "ok/a.parquet", parquet_bytes(make_rows(1, 2)))])
    p.loader().drain()
    strings = [r | {"order_id": f"x{r['order_id']}"} for r in make_rows(2, 2)]
    gone = put(s3, landing, "gone.parquet", parquet_bytes(make_rows(3, 2)))
    s3.delete_object(Bucket=landing, Key="gone.parquet")
    record(p.changelog, [put(s3, landing, "bad/strings.parquet", parquet_bytes(strings)),
                         put(s3, landing, "bad/corrupt.parquet", b"PAR1 not really parquet PAR1"),
                         put(s3, landing, "empty.parquet", b""), gone,
                         ObjectEvent("no-such-bucket-x1", "a.parquet", "ObjectCreated:Put", NOW, 5, "e"),
                         put(s3, landing, "ok/b.parquet", parquet_bytes(make_rows(4, 2)))])
    p.loader().drain()
    status = {r["key"]: r["status"] for r in ledger_rows(p)}
    assert status == {"ok/a.parquet": "loaded", "ok/b.parquet": "loaded", "empty.parquet": "loaded",
                      "bad/strings.parquet": "schema_conflict", "bad/corrupt.parquet": "corrupt",
                      "gone.parquet": "missing", "a.parquet": "missing"}
    assert ids(target_rows(p)) == sorted(r["order_id"] for r in make_rows(1, 2) + make_rows(4, 2))


def test_new_columns_and_partitions(spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, schema=None, target_format=target_format)
    p = parts(replace(config, tables=replace(config.tables, partition_by=("customer",))), spark)
    first = make_rows(1, 4)
    record(p.changelog, [put(s3, landing, "a.parquet", parquet_bytes(first))])
    p.loader().drain()
    wider = [r | {"region": "eu"} for r in make_rows(2, 3)]
    record(p.changelog, [put(s3, landing, "b.parquet", parquet_bytes(wider))])
    p.loader().drain()
    table = target_rows(p)
    assert Counter(table.column("region").to_pylist()) == {None: 4, "eu": 3}
    got = sorted(zip(table.column("order_id").to_pylist(), table.column("customer").to_pylist(), strict=True))
    assert got == sorted((r["order_id"], r["customer"]) for r in first + wider)
    assert spark_rows(spark, p).where("customer = 'c001'").count() == sum(
        r["customer"] == "c001" for r in first + wider)


def test_removed_objects_lose_their_rows_in_the_checkpoint_commit(spark: Any, aws: AwsSection,
                                                                  target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 3, 2)
    p = parts(make_config(aws, lake, target_format=target_format, on_delete="remove-rows"), spark)
    record(p.changelog, upload(s3, landing, files))
    p.loader().drain()
    s3.delete_object(Bucket=landing, Key=files[1].key)
    removal = ObjectEvent(landing, files[1].key, "ObjectRemoved:Delete", datetime.now(UTC))
    record(p.changelog, [removal])
    p.loader().drain()
    assert ids(target_rows(p)) == sorted(r["order_id"] for f in (files[0], files[2]) for r in f.rows)
    removed = [r for r in ledger_rows(p) if r["status"] == "removed"]
    assert [(r["key"], r["rows"]) for r in removed] == [(files[1].key, 2)]
    head = p.target.commits(1)[0]
    assert head.operation == "remove" and head.position == Position(1)
