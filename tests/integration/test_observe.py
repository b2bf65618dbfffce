"""`lakeinlet.observe` against moto and the jobs' real adapters (changelog, target, ledger, SQS), no Spark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from lakeinlet import observe
from lakeinlet.aws import AwsSection, client, storage_options
from lakeinlet.changelog import DeltaChangelog
from lakeinlet.emulator import Stack
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import CORRUPT, LOADED, Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets.delta import DeltaTarget
from tests.conftest import unique

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
    version = target.commit(NOTHING_READ, Position(-1), Position(1), "batch-1", outcomes)
    DeltaLedger(uris["ledger"], aws, "lakeinlet-loader").append(outcomes, version, "batch-1")
    target.commit_reset(Position(1), Position(0), "look again")
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
