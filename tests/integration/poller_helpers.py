"""Helpers of the poller's integration tests: its command line, uploads, changelog rows, queue depths."""

from __future__ import annotations

import pyarrow as pa

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.sources.sqs import SqsQueue


def poll_args(stack: Stack, changelog: str, *extra: str) -> list[str]:
    """One receiver: moto's ReceiveMessage is not atomic across concurrent callers (the benchmark
    saw 2 of 200 messages handed to two receivers at once), which would make exact row counts
    flaky here. Parallel receivers are tested on the in-memory queue (tests/unit/test_poller.py)."""
    return ["--queue-url", stack.queue_url, "--changelog", changelog, "--endpoint-url", stack.endpoint,
            "--bucket", stack.bucket, "--until-empty", "--wait-seconds", "1", "--receivers", "1",
            "--batch-seconds", "2", *extra]


def upload(stack: Stack, keys: list[str], bucket: str | None = None) -> None:
    s3 = client("s3", AwsSection(endpoint_url=stack.endpoint))
    for key in keys:
        s3.put_object(Bucket=bucket or stack.bucket, Key=key, Body=key.encode())


def rows(uri: str, aws: AwsSection) -> list[dict[str, object]]:
    return pa.table(DeltaChangelog(uri, aws).read_versions(-1)).to_pylist()  # arro3 → pyarrow


def queue_counts(stack: Stack) -> tuple[int, int]:
    d = SqsQueue.from_config(stack.queue_url, AwsSection(endpoint_url=stack.endpoint)).depths()
    return d.visible, d.in_flight
