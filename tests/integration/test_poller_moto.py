"""The event source end to end on moto: uploads → `main([...])` → changelog, crash and rerun,
poison to the DLQ, the bucket allow-list, `status` and JSON log lines."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import MotoServer, Stack, provision
from lakeinlet.queue_settings import QueueSettings
from lakeinlet.sources.crash_points import InjectedCrash, crash_at
from lakeinlet.sources.job import main
from lakeinlet.sources.poller import Poller, PollerSettings
from lakeinlet.sources.sqs import SqsQueue
from tests.conftest import unique
from tests.integration.poller_helpers import poll_args, queue_counts, rows, upload

pytestmark = pytest.mark.integration

KEYS = ["plain/a.json", "with space/b c.json", "plus/c+d.json", "pct/e%2Bf%25.json", "ünï/日本 語.json"]










def short_stack(moto_server: MotoServer, **settings: int) -> Stack:
    return provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"),
                     settings=QueueSettings(**settings))  # type: ignore[arg-type]


def test_uploads_become_exactly_one_row_each_on_an_s3_changelog(stack: Stack, aws: AwsSection) -> None:
    upload(stack, KEYS)
    lake = unique("lake")
    client("s3", aws).create_bucket(Bucket=lake)
    uri = f"s3://{lake}/changelog"
    assert main(poll_args(stack, uri, "--bucket", stack.bucket)) == 0
    got = rows(uri, aws)
    assert sorted(r["key"] for r in got) == sorted(KEYS)
    assert {r["bucket"] for r in got} == {stack.bucket}
    assert {r["event_name"] for r in got} == {"ObjectCreated:Put"}
    assert all(r["size"] == len(str(r["key"]).encode()) for r in got)
    assert len({r["event_id"] for r in got}) == len(KEYS)
    assert queue_counts(stack) == (0, 0)


def test_aws_endpoint_url_from_the_environment(stack: Stack, aws: AwsSection, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    upload(stack, ["env/one.json"])
    monkeypatch.setenv("AWS_ENDPOINT_URL", stack.endpoint)
    args = poll_args(stack, str(tmp_path / "cl"))
    args.remove("--endpoint-url")
    args.remove(stack.endpoint)
    assert main(args) == 0
    assert [r["key"] for r in rows(str(tmp_path / "cl"), aws)] == ["env/one.json"]


def test_crash_between_commit_and_delete_loses_nothing(moto_server: MotoServer, aws: AwsSection,
                                                       tmp_path: Path) -> None:
    stack = short_stack(moto_server, visibility_timeout_seconds=2)
    upload(stack, KEYS)
    uri = str(tmp_path / "cl")
    settings = PollerSettings(wait_seconds=1, visibility_timeout=2, receivers=1, batch_size=100,
                              batch_seconds=1.5, until_empty=True)
    with pytest.raises(InjectedCrash):
        Poller(queue=SqsQueue.from_config(stack.queue_url, aws), changelog=DeltaChangelog(uri, aws),
               settings=settings, crash=crash_at("after_commit")).run()
    first = rows(uri, aws)
    assert first and queue_counts(stack)[1] >= len(first)  # committed, not deleted
    time.sleep(2.5)  # the visibility timeout expires: the messages come back
    assert main(poll_args(stack, uri, "--visibility-timeout", "2", "--batch-seconds", "1.5")) == 0
    after = rows(uri, aws)
    assert sorted({str(r["key"]) for r in after}) == sorted(KEYS)
    by_key: dict[str, set[str]] = {}
    for r in after:
        by_key.setdefault(str(r["key"]), set()).add(str(r["event_id"]))
    assert all(len(ids) == 1 for ids in by_key.values())  # duplicates carry the same event_id
    assert len(after) == len(KEYS) + len(first)
    assert queue_counts(stack) == (0, 0)


def test_poison_reaches_the_dlq_after_max_receive_count(moto_server: MotoServer, aws: AwsSection,
                                                        tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    stack = short_stack(moto_server, visibility_timeout_seconds=1, max_receive_count=2)
    sqs = SqsQueue.from_config(stack.queue_url, aws)
    sqs.send_batch(['{"Records": "truncated', '{"unrelated": "json"}'])
    upload(stack, ["good/one.json"])
    uri = str(tmp_path / "cl")
    for _ in range(3):
        assert main(poll_args(stack, uri, "--visibility-timeout", "1", "--batch-seconds", "0.5",
                              "--log-format", "json")) == 0
        time.sleep(1.2)
    summaries = [json.loads(line) for line in capsys.readouterr().err.splitlines()
                 if '"event": "summary"' in line]
    assert summaries[0]["poison"] >= 2  # a receipt of a poison message each time it comes back
    assert any(w in summaries[0]["first_poison_error"] for w in ("not JSON", "expected an S3 event"))
    assert [r["key"] for r in rows(uri, aws)] == ["good/one.json"]
    assert main(["status", "--queue-url", stack.queue_url, "--endpoint-url", stack.endpoint,
                 "--changelog", uri, "--log-format", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["dlq_visible"], status["visible"], status["in_flight"]) == (2, 0, 0)
    assert status["changelog_version"] == 0 and status["changelog_time"]


def test_events_from_buckets_outside_the_allow_list_are_acked_not_written(
        stack: Stack, aws: AwsSection, tmp_path: Path) -> None:
    other = unique("other")
    s3 = client("s3", aws)
    s3.create_bucket(Bucket=other)
    s3.put_bucket_notification_configuration(Bucket=other, NotificationConfiguration={
        "QueueConfigurations": [{"QueueArn": stack.queue_arn, "Events": ["s3:ObjectCreated:*"]}]})
    upload(stack, ["ours.json"])
    upload(stack, ["theirs.json"], bucket=other)
    uri = str(tmp_path / "cl")
    assert main(poll_args(stack, uri, "--bucket", stack.bucket)) == 0
    assert [(r["bucket"], r["key"]) for r in rows(uri, aws)] == [(stack.bucket, "ours.json")]
    assert queue_counts(stack) == (0, 0)  # acknowledged: retrying cannot make them acceptable


def test_json_log_has_one_line_per_batch_and_a_summary(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    upload(stack, [f"j/{i}.json" for i in range(7)])
    assert main(poll_args(stack, str(tmp_path / "cl"), "--batch-size", "3", "--log-format", "json")) == 0
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    batches = [x for x in lines if x["event"] == "batch"]
    assert sum(b["rows"] for b in batches) == 7 and all(b["rows"] <= 3 for b in batches)
    assert {"messages", "events", "rows", "acked", "skipped", "poison", "version", "commit_s",
            "ack_s"} <= set(batches[0])
    (summary,) = [x for x in lines if x["event"] == "summary"]
    assert summary["rows"] == 7 and summary["acked"] == 8  # + moto's s3:TestEvent
    assert summary["skipped"] == 1


def test_until_empty_with_the_readme_defaults_ends_soon_after_the_queue_is_empty(
        stack: Stack, aws: AwsSection, tmp_path: Path) -> None:
    """The README's flow: no wait or batch flags (20 s long polls, a 10 s batch window)."""
    upload(stack, ["readme/0.json", "readme/1.json", "readme/2.json"])  # + s3:TestEvent: 4 messages
    started = time.monotonic()
    assert main(["--queue-url", stack.queue_url, "--changelog", str(tmp_path / "cl"),
                 "--endpoint-url", stack.endpoint, "--bucket", stack.bucket, "--until-empty"]) == 0
    elapsed = time.monotonic() - started
    keys = sorted(str(r["key"]) for r in rows(str(tmp_path / "cl"), aws))
    assert keys == [f"readme/{i}.json" for i in range(3)], f"expected the 3 uploads, found {keys}"
    assert queue_counts(stack) == (0, 0)
    assert elapsed < 8, f"expected the drain to end seconds after the queue is empty, took {elapsed:.1f} s"


def test_a_missing_queue_is_a_terminal_error(moto_server: MotoServer, tmp_path: Path) -> None:
    url = f"{moto_server.endpoint}/123456789012/{unique('missing')}"
    assert main(["--queue-url", url, "--changelog", str(tmp_path / "cl"), "--endpoint-url",
                 moto_server.endpoint, "--any-bucket", "--until-empty", "--wait-seconds", "0"]) == 2


@pytest.mark.parametrize("raw", [False, True], ids=["sns-wrapped", "sns-raw"])
def test_s3_to_sns_to_sqs_envelopes(moto_server: MotoServer, aws: AwsSection, tmp_path: Path,
                                    raw: bool) -> None:
    stack = provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"),
                      via_sns=True, raw_delivery=raw)
    upload(stack, KEYS[:3])
    uri = str(tmp_path / "cl")
    assert main(poll_args(stack, uri, "--bucket", stack.bucket)) == 0
    got = rows(uri, aws)
    assert sorted(r["key"] for r in got) == sorted(KEYS[:3])
    assert {r["envelope"] for r in got} == {"s3" if raw else "sns"}
    assert queue_counts(stack) == (0, 0)
