"""`--poison dlq` on moto: a poison message reaches the DLQ in the same run (body and message
attributes intact, the parse error added), the queue ends empty, and every poison is logged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer, Stack
from lakeinlet.sources.job import main
from lakeinlet.sources.poison import ERROR_ATTRIBUTE
from tests.conftest import unique
from tests.integration.poller_helpers import poll_args, queue_counts, rows, upload

pytestmark = pytest.mark.integration

EVENTS = Path(__file__).parent.parent / "data" / "events"
ATTRS = {"origin": {"DataType": "String", "StringValue": "uploader-7"},
         "blob": {"DataType": "Binary", "BinaryValue": b"\x00\xff"}}


def dlq_messages(aws: AwsSection, url: str) -> list[dict[str, Any]]:
    sqs, got = client("sqs", aws), []
    while msgs := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                      MessageAttributeNames=["All"]).get("Messages", []):
        got += msgs
    return got


def send_poison(aws: AwsSection, url: str, name: str) -> str:
    body = (EVENTS / name).read_text()
    client("sqs", aws).send_message(QueueUrl=url, MessageBody=body, MessageAttributes=ATTRS)
    return body


def test_poison_moves_to_the_redrive_policy_dlq_in_the_same_run(
        stack: Stack, aws: AwsSection, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bodies = [send_poison(aws, stack.queue_url, n) for n in ("malformed.json", "not_s3_event.json")]
    upload(stack, ["good/one.json"])
    uri = str(tmp_path / "cl")
    assert main(poll_args(stack, uri, "--poison", "dlq", "--log-format", "json")) == 0
    assert queue_counts(stack) == (0, 0), "expected the poison moved, not in flight"
    moved = dlq_messages(aws, stack.dlq_url)
    assert sorted(m["Body"] for m in moved) == sorted(bodies)
    for m in moved:
        attrs = m["MessageAttributes"]
        assert {k: v for k, v in attrs.items() if k != ERROR_ATTRIBUTE} == ATTRS, attrs
        assert any(w in attrs[ERROR_ATTRIBUTE]["StringValue"] for w in ("not JSON", "expected an S3 event"))
    assert [r["key"] for r in rows(uri, aws)] == ["good/one.json"]
    lines = [json.loads(x) for x in capsys.readouterr().err.splitlines() if x.startswith("{")]
    assert len([x for x in lines if x["event"] == "poison"]) == 2, "expected one line per poison message"
    (summary,) = [x for x in lines if x["event"] == "summary"]
    assert (summary["poison"], summary["poison_moved"], summary["poison_move_failures"]) == (2, 2, 0)


def test_poison_moves_to_a_configured_dlq_url(stack: Stack, aws: AwsSection, tmp_path: Path) -> None:
    parking = client("sqs", aws).create_queue(QueueName=unique("parking"))["QueueUrl"]
    body = send_poison(aws, stack.queue_url, "malformed.json")
    assert main(poll_args(stack, str(tmp_path / "cl"), "--poison", "dlq", "--dlq-url", parking)) == 0
    assert [m["Body"] for m in dlq_messages(aws, parking)] == [body]
    assert dlq_messages(aws, stack.dlq_url) == [] and queue_counts(stack) == (0, 0)


def test_poison_dlq_without_a_dlq_is_a_configuration_error(
        moto_server: MotoServer, aws: AwsSection, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = client("sqs", aws).create_queue(QueueName=unique("no-redrive"))["QueueUrl"]
    assert main(["--queue-url", url, "--changelog", str(tmp_path / "cl"), "--endpoint-url",
                 moto_server.endpoint, "--any-bucket", "--until-empty", "--poison", "dlq"]) == 2
    err = capsys.readouterr().err
    assert "--poison dlq: expected a DLQ in the RedrivePolicy" in err, err
