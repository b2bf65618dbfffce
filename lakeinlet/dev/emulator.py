"""The embedded local stack: a moto server on a loopback port, provisioned through boto3.

Used by `lakeinlet local up|down`, the demo and the tests. Only loopback addresses are used.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from lakeinlet import install_hint
from lakeinlet.aws import AwsSection, client
from lakeinlet.events import WANTED
from lakeinlet.queue_settings import DEFAULT_QUEUE_SETTINGS, QueueSettings

ACCOUNT_ID = "123456789012"  # moto's fixed account id
NOTIFIED_EVENTS = [f"s3:{prefix}*" for prefix in WANTED]
"""What the local stack's bucket notification subscribes to: the event types the poller keeps by
default (infra/terraform's `event_types` default is the same list)."""
TEST_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                    "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (bound and released; the race is acceptable for tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


MODULE = "lakeinlet.dev.moto_server"
"""What `MotoServer` runs: moto's server (`python -m MODULE -H … -p …`)."""


class MotoMissing(RuntimeError):
    """moto's server is not installed in this Python (it comes with the `local` extra)."""


class MotoServer:
    """A moto server in its own process on 127.0.0.1, as a context manager.

    Never in-process: delta-rs holds the GIL during some calls (e.g. `DeltaTable.history`)
    while waiting on HTTP, which deadlocks against a server thread in the same interpreter.
    """

    def __init__(self, port: int = 0, log: str | None = None) -> None:
        self.port = port or free_port()
        self._log = log
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self, timeout: float = 30.0) -> MotoServer:
        """Start the server and wait until it accepts connections.

        Raises:
            MotoMissing: moto is not installed in this Python.
            RuntimeError: the server exited or did not listen within `timeout` seconds.
        """
        if importlib.util.find_spec("moto") is None:
            raise MotoMissing("the local stack runs moto's server, which is not installed in "
                              f"{sys.executable}: install lakeinlet with its local extra "
                              f"(`{install_hint('local')}`)")
        out = open(self._log, "ab") if self._log else subprocess.DEVNULL  # noqa: SIM115
        self._proc = subprocess.Popen(
            [sys.executable, "-m", MODULE, "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=out, stderr=out, start_new_session=True, env=os.environ | TEST_CREDENTIALS)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # waiting for the process to listen: not an error retry
            if self._proc.poll() is not None:
                raise RuntimeError(f"moto server exited with code {self._proc.returncode}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto server did not listen on 127.0.0.1:{self.port} in {timeout}s")

    def stop(self) -> None:
        stop_process(self._proc)

    def __enter__(self) -> MotoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class Stack:
    """What `provision` created: the names and addresses the two jobs are configured with."""

    endpoint: str
    region: str
    bucket: str
    queue_url: str
    queue_arn: str
    dlq_url: str
    dlq_arn: str
    topic_arn: str | None = None
    settings: dict[str, int | bool] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def provision(endpoint: str, *, bucket: str = "lakeinlet-landing", queue: str = "lakeinlet-events",
              region: str = "us-east-1", via_sns: bool = False, raw_delivery: bool = False,
              prefix: str = "", settings: QueueSettings = DEFAULT_QUEUE_SETTINGS,
              notify: bool = True) -> Stack:
    """Create bucket, DLQ, queue (long polling, redrive), queue policy and notification.

    Args:
        endpoint: the emulator's URL.
        via_sns: route S3 → SNS topic → SQS instead of S3 → SQS.
        raw_delivery: with via_sns, deliver the S3 event without the SNS wrapper.
        prefix: only keys under this prefix are notified.
        notify: False leaves notifications off (to test backfills).
    """
    aws = AwsSection(endpoint_url=endpoint, region=region)
    s3, sqs = client("s3", aws), client("sqs", aws)
    if region == "us-east-1":
        s3.create_bucket(Bucket=bucket)
    else:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})
    dlq_url = sqs.create_queue(QueueName=f"{queue}-dlq", Attributes={
        "MessageRetentionPeriod": str(settings.dlq_message_retention_seconds)})["QueueUrl"]
    dlq_arn = _arn(sqs, dlq_url)
    attrs = settings.queue_attributes() | {"RedrivePolicy": settings.redrive_policy(dlq_arn)}
    queue_url = sqs.create_queue(QueueName=queue, Attributes=attrs)["QueueUrl"]
    queue_arn = _arn(sqs, queue_url)
    bucket_arn = f"arn:aws:s3:::{bucket}"
    topic_arn = None
    if via_sns:
        topic_arn = _sns_fanout(aws, queue, queue_arn, queue_url, bucket_arn, raw_delivery)
    sender = ("sns.amazonaws.com", topic_arn) if topic_arn else ("s3.amazonaws.com", bucket_arn)
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes={
        "Policy": json.dumps(queue_policy(queue_arn, *sender))})
    stack = Stack(endpoint, region, bucket, queue_url, queue_arn, dlq_url, dlq_arn, topic_arn,
                  settings.as_dict())
    if notify:
        set_notifications(stack, enabled=True, prefix=prefix)
    return stack


def set_notifications(stack: Stack, *, enabled: bool, prefix: str = "") -> None:
    """Switch the bucket's event notifications on (created, removed, lifecycle-expired) or off."""
    s3 = client("s3", AwsSection(endpoint_url=stack.endpoint, region=stack.region))
    if not enabled:
        s3.put_bucket_notification_configuration(Bucket=stack.bucket,
                                                 NotificationConfiguration={})
        return
    cfg: dict[str, object] = {"Events": list(NOTIFIED_EVENTS)}
    if prefix:
        cfg["Filter"] = {"Key": {"FilterRules": [{"Name": "prefix", "Value": prefix}]}}
    if stack.topic_arn:
        conf = {"TopicConfigurations": [cfg | {"TopicArn": stack.topic_arn}]}
    else:
        conf = {"QueueConfigurations": [cfg | {"QueueArn": stack.queue_arn}]}
    s3.put_bucket_notification_configuration(Bucket=stack.bucket, NotificationConfiguration=conf)


def queue_policy(queue_arn: str, service: str, source_arn: str) -> dict[str, object]:
    """Allow only `source_arn` (the bucket or topic) of this account to send; deny non-TLS."""
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "AllowSourceToSend", "Effect": "Allow", "Principal": {"Service": service},
         "Action": "sqs:SendMessage", "Resource": queue_arn,
         "Condition": {"ArnEquals": {"aws:SourceArn": source_arn},
                       "StringEquals": {"aws:SourceAccount": ACCOUNT_ID}}},
        {"Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "sqs:*",
         "Resource": queue_arn, "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}


def _arn(sqs: object, url: str) -> str:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])  # type: ignore[attr-defined]
    return str(attrs["Attributes"]["QueueArn"])


def _sns_fanout(aws: AwsSection, queue: str, queue_arn: str, queue_url: str, bucket_arn: str,
                raw_delivery: bool) -> str:
    sns = client("sns", aws)
    topic_arn = str(sns.create_topic(Name=f"{queue}-topic")["TopicArn"])
    sns.set_topic_attributes(TopicArn=topic_arn, AttributeName="Policy", AttributeValue=json.dumps(
        {"Version": "2012-10-17", "Statement": [{
            "Sid": "AllowBucketToPublish", "Effect": "Allow",
            "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sns:Publish",
            "Resource": topic_arn, "Condition": {"ArnEquals": {"aws:SourceArn": bucket_arn}}}]}))
    attrs = {"RawMessageDelivery": "true"} if raw_delivery else {}
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn, Attributes=attrs)
    return topic_arn


def process_identity(pid: int) -> str | None:
    """When process `pid` started and its command line, as `ps` shows them (Linux and macOS), or
    None when no such process runs: a pid alone may name another process once the first is gone."""
    done = subprocess.run(["ps", "-ww", "-o", "lstart=", "-o", "args=", "-p", str(pid)],
                          capture_output=True, text=True)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def is_moto(identity: str | None) -> bool:
    """Whether `identity` (`process_identity`) is a moto server's, as `MotoServer.start` runs it."""
    return identity is not None and f" -m {MODULE} " in f" {identity} "


def stop_process(proc: subprocess.Popen[bytes] | None, grace_seconds: float = 10) -> None:
    """Stop a server this process started: SIGTERM, then SIGKILL if it outlives the grace time."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
