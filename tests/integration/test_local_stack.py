"""`lakeinlet local up|down` and the provisioning it shares with the tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import Stack, provision, set_notifications
from lakeinlet.queue_settings import DEFAULT_QUEUE_SETTINGS
from tests.conftest import unique

pytestmark = pytest.mark.integration


def _bodies(aws: AwsSection, queue_url: str) -> list[dict[str, object]]:
    sqs = client("sqs", aws)
    out = []
    while msgs := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10,
                                      WaitTimeSeconds=1).get("Messages"):
        out += [json.loads(m["Body"]) for m in msgs]
    return out


def test_provision_sets_queue_settings_redrive_and_policy(stack: Stack, aws: AwsSection) -> None:
    attrs = client("sqs", aws).get_queue_attributes(
        QueueUrl=stack.queue_url, AttributeNames=["All"])["Attributes"]
    expected = DEFAULT_QUEUE_SETTINGS.queue_attributes()
    assert {k: attrs[k] for k in expected} == expected
    redrive = json.loads(attrs["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == stack.dlq_arn
    assert int(redrive["maxReceiveCount"]) == DEFAULT_QUEUE_SETTINGS.max_receive_count
    policy = json.loads(attrs["Policy"])
    allow = policy["Statement"][0]
    assert allow["Condition"]["ArnEquals"]["aws:SourceArn"] == f"arn:aws:s3:::{stack.bucket}"


def test_notifications_deliver_and_can_be_switched_off(stack: Stack, aws: AwsSection) -> None:
    s3 = client("s3", aws)
    s3.put_object(Bucket=stack.bucket, Key="on.json", Body=b"{}")
    records = [b for b in _bodies(aws, stack.queue_url) if "Records" in b]
    assert [r["Records"][0]["s3"]["object"]["key"] for r in records] == ["on.json"]  # type: ignore[index]
    set_notifications(stack, enabled=False)
    s3.put_object(Bucket=stack.bucket, Key="off.json", Body=b"{}")
    assert [b for b in _bodies(aws, stack.queue_url) if "Records" in b] == []


def test_sns_fanout_wraps_the_s3_event(moto_server: object, aws: AwsSection) -> None:
    st = provision(aws.endpoint_url or "", bucket=unique("land"), queue=unique("q"), via_sns=True)
    client("s3", aws).put_object(Bucket=st.bucket, Key="x.json", Body=b"{}")
    wrapped = [b for b in _bodies(aws, st.queue_url) if b.get("Type") == "Notification"]
    assert wrapped and "ObjectCreated" in str(wrapped[-1]["Message"])


def test_local_up_and_down_cli(tmp_path: Path) -> None:
    state = tmp_path / "state"
    up = subprocess.run([sys.executable, "-m", "lakeinlet.dev.cli", "local", "up", "--state-dir", str(state)],
                        capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    stack = json.loads(up.stdout)
    try:
        assert stack["endpoint"].startswith("http://127.0.0.1:")
        sqs = client("sqs", AwsSection(endpoint_url=stack["endpoint"]))
        assert sqs.get_queue_url(QueueName="lakeinlet-events")["QueueUrl"] == stack["queue_url"]
        again = subprocess.run([sys.executable, "-m", "lakeinlet.dev.cli", "local", "up",
                                "--state-dir", str(state)], capture_output=True, text=True, timeout=60)
        assert again.returncode == 2 and "already" in again.stderr
    finally:
        down = subprocess.run([sys.executable, "-m", "lakeinlet.dev.cli", "local", "down",
                               "--state-dir", str(state)], capture_output=True, text=True, timeout=60)
    assert down.returncode == 0 and "stopped" in down.stdout
    assert not (state / "local.json").exists()
