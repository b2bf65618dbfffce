"""`lakeinlet.observe.frames` against moto and the jobs' real adapters (changelog, target, ledger,
SQS), no Spark: where the loader would hand Spark's DataFrame to the Delta target, pyarrow writes
the files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import CORRUPT, LOADED, Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import NOTHING_READ, ReadBatch
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.incremental.targets.schema import LINEAGE_SCHEMA
from lakeinlet.observe import frames as observe
from lakeinlet.storage import storage_options
from tests.conftest import unique
from tests.targets import commit

pytestmark = pytest.mark.integration
T0 = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)
KEYS = ["in/a.json", "in/b.json", "in/broken.json"]


def received(bucket: str, key: str, i: int, batch: str) -> ReceivedEvent:
    event = ObjectEvent(bucket, key, "ObjectCreated:Put", T0 + timedelta(seconds=i), 100 + i, f"etag{i}")
    return ReceivedEvent(event, f"m{i}", T0 + timedelta(seconds=i + 2), batch)


def planned(ev: ReceivedEvent, version: int) -> PlannedObject:
    e = ev.event
    return PlannedObject(e.bucket, e.key, e.etag, None, e.size or 0, e.event_id, e.event_time, version)


@pytest.fixture
def lake(aws: AwsSection) -> dict[str, str]:
    """A changelog of two commits, a target with one load and one reset, and its ledger."""
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    uris = {"changelog": f"s3://{bucket}/changelog", "table": f"s3://{bucket}/t",
            "ledger": f"s3://{bucket}/t_ledger"}
    changelog = DeltaChangelog(uris["changelog"], aws)
    events = [received("land", k, i, f"b{i // 2}") for i, k in enumerate(KEYS)]
    changelog.append(events[:2], {"source_id": "events", "poll_batch": "b0", "messages": "3"})
    changelog.append(events[2:], {"source_id": "events", "poll_batch": "b1", "messages": "1"})
    outcomes = [Outcome(planned(events[0], 0), LOADED, rows=5),
                Outcome(planned(events[1], 0), LOADED, rows=7),
                Outcome(planned(events[2], 1), CORRUPT, "no parseable record (3 malformed)")]
    target = DeltaTarget(uris["table"], aws, "lakeinlet-loader")
    version, _ = commit(target, NOTHING_READ, Position(-1), Position(1), "batch-1", outcomes)
    DeltaLedger(uris["ledger"], aws, "lakeinlet-loader").append(outcomes, version, "batch-1")
    target.commit_position(Position(1), Position(0), "look again")
    return uris


def test_commits_batches_lag_and_quarantine_from_real_tables(lake: dict[str, str], aws: AwsSection) -> None:
    commits = observe.changelog_commits_frame(lake["changelog"], aws)
    assert commits[["version", "events", "messages", "poll_batch"]].values.tolist() == \
        [[0, 2, 3, "b0"], [1, 1, 1, "b1"]]
    batches = observe.load_batches_frame(lake["table"], aws)
    assert batches["operation"].tolist() == ["load", "checkpoint-reset"]
    assert batches[["objects", "loaded", "not_loaded", "rows"]].iloc[0].tolist() == [3, 2, 1, 12]
    assert (batches["position"].tolist(), batches["reason"].iloc[1]) == (["1", "0"], "look again")
    lag = observe.lag_frame(lake["table"], lake["changelog"], aws, lake["ledger"])
    assert sorted(lag["key"]) == KEYS[:2]
    assert lag["queue_s"].tolist() == [2.0, 2.0]  # received 2 s after each event
    assert (lag["lag_s"] > 0).all() and lag["lag_s"].notna().all()
    held = observe.quarantined(lake["ledger"], aws)
    assert held[["key", "status"]].values.tolist() == [["in/broken.json", "corrupt"]]
    after_v0 = observe.changelog_rows(lake["changelog"], aws, after=0)
    assert after_v0["key"].tolist() == ["in/broken.json"]


def test_counts_and_duplicates(aws: AwsSection) -> None:
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    uri = f"s3://{bucket}/rows"
    rows = pa.table({"order_id": [1, 2, 2, 3], "_source_key": ["a", "a", "b", "b"]})
    write_deltalake(uri, rows, storage_options=storage_options(aws, uri))
    assert observe.table_counts("s3a://" + uri[len("s3://"):], aws, "order_id") == \
        {"rows": 4, "keys": 3, "duplicates": 1, "objects": 2}


def test_dlq_peek_leaves_the_messages_there(stack: Stack, aws: AwsSection) -> None:
    sqs = client("sqs", aws)
    for body in ('{"Records": "truncated', "plain text"):
        sqs.send_message(QueueUrl=stack.dlq_url, MessageBody=body)
    first = observe.dlq_messages(stack.dlq_url, aws)
    second = observe.dlq_messages(stack.dlq_url, aws)
    assert sorted(first["body"]) == sorted(second["body"]) == ['plain text', '{"Records": "truncated']
    assert all("not JSON" in r for r in first["reason"])
    attrs = sqs.get_queue_attributes(QueueUrl=stack.dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
    assert attrs["Attributes"]["ApproximateNumberOfMessages"] == "2"
    assert first["receive_count"].tolist() == [1, 1] and second["receive_count"].tolist() == [2, 2]


class ArrowFrame:
    """The part of a Spark DataFrame the Delta target uses (`df.coalesce(n).write.mode(…)
    .partitionBy().parquet(uri)`), done by pyarrow: one Parquet file per object, as Spark's tasks
    would write them without file sizing."""

    def __init__(self, parts: list[pa.Table], fs: Any) -> None:
        self.parts, self.fs = parts, fs

    @property
    def write(self) -> ArrowFrame:
        return self

    def mode(self, _: str) -> ArrowFrame:
        return self

    def partitionBy(self, *_: str) -> ArrowFrame:  # Spark's name
        return self

    def coalesce(self, _: int) -> ArrowFrame:  # file sizing's: kept a file per object, to compact
        return self

    @property
    def sparkSession(self) -> Any:  # Spark's name; file sizing spreads a big batch over the cores
        return SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=1))

    def parquet(self, uri: str) -> None:
        folder = uri.split("://", 1)[1]
        for i, part in enumerate(self.parts):
            pq.write_table(part, f"{folder}/part-{i:05d}.parquet", filesystem=self.fs)


def rows_of(ev: ReceivedEvent, ids: range, batch: str) -> pa.Table:
    """The rows the loader would commit for one object: `ids` as order ids, with their lineage."""
    e, n = ev.event, len(ids)
    schema = pa.schema([("order_id", pa.int64()), *LINEAGE_SCHEMA])
    return pa.table({"order_id": list(ids), "_source_bucket": [e.bucket] * n, "_source_key": [e.key] * n,
                     "_source_etag": [e.etag] * n, "_source_event_time": [e.event_time] * n,
                     "_ingest_batch": [batch] * n}, schema=schema)


def load(target: DeltaTarget, ledger: DeltaLedger, start: Position, end: Position, batch: str,
         objects: list[tuple[ReceivedEvent, range]]) -> None:
    """One load batch through the Delta target's own commit: one data file per object."""
    parts = [rows_of(ev, ids, batch) for ev, ids in objects]
    read = ReadBatch(ArrowFrame(parts, target.fs), parts[0].schema, {}, {}, {})
    outcomes = [Outcome(planned(ev, end.complete), LOADED, rows=len(ids)) for ev, ids in objects]
    ledger.append(outcomes, commit(target, read, start, end, batch, outcomes)[0], batch)


def test_compaction_and_vacuum_change_no_load_batch(aws: AwsSection) -> None:
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    uri = f"s3://{bucket}/t"
    target = DeltaTarget(uri, aws, "lakeinlet-loader")
    ledger = DeltaLedger(uri + "_ledger", aws, "lakeinlet-loader")
    events = [received("land", k, i, "b0") for i, k in enumerate(KEYS)]
    load(target, ledger, Position(-1), Position(0), "batch-1", [(events[0], range(0, 3)),
                                                                 (events[1], range(10, 12))])
    load(target, ledger, Position(0), Position(1), "batch-2", [(events[2], range(20, 24))])
    before = observe.load_batches_frame(uri, aws)
    assert before[["data_files", "rows"]].values.tolist() == [[2, 5], [1, 4]]
    assert (before["data_bytes"] > 0).all()
    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    assert dt.optimize.compact()["numFilesRemoved"] == 3
    assert len(dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)) == 3
    assert len(DeltaTable(uri, storage_options=storage_options(aws, uri)).file_uris()) == 1
    assert observe.load_batches_frame(uri, aws).equals(before)
    assert observe.table_counts(uri, aws, "order_id") == {"rows": 9, "keys": 9, "duplicates": 0, "objects": 3}
    assert sorted(observe.target_frame(uri, aws, columns=["order_id"])["order_id"]) == \
        [0, 1, 2, 10, 11, 20, 21, 22, 23]


@pytest.mark.parametrize("fmt", ["hudi", "iceberg"])
def test_a_table_not_written_yet_has_no_batches(fmt: str, aws: AwsSection, tmp_path: Path) -> None:
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    uri, catalog = f"s3a://{bucket}/t", observe.local_catalog(fmt, tmp_path)
    frame = observe.load_batches_frame(uri, aws, fmt, **catalog)
    assert frame.empty and frame.columns.tolist() == observe.BATCH_COLUMNS
    with pytest.raises(FileNotFoundError, match=f"no {fmt} table there"):
        observe.table_counts(uri, aws, "order_id", fmt, **catalog)
