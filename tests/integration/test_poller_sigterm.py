"""SIGTERM to a running `python -m lakeinlet.sources` (continuous mode): the open batch is
committed and acknowledged, never lost, and the process exits 0 with a summary line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.sources.sqs import SqsQueue

pytestmark = pytest.mark.integration


def test_sigterm_commits_the_open_batch_and_exits_0(stack: Stack, aws: AwsSection, tmp_path: Path) -> None:
    keys = [f"term/{i} x.json" for i in range(5)]
    s3 = client("s3", aws)
    for key in keys:
        s3.put_object(Bucket=stack.bucket, Key=key, Body=b"{}")
    uri = str(tmp_path / "cl")
    proc = subprocess.Popen(
        [sys.executable, "-m", "lakeinlet.sources", "--queue-url", stack.queue_url, "--changelog", uri,
         "--endpoint-url", stack.endpoint, "--bucket", stack.bucket, "--wait-seconds", "1",
         "--receivers", "1", "--batch-seconds", "60", "--batch-size", "1000", "--log-format", "json"],
        stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    queue = SqsQueue.from_config(stack.queue_url, aws)
    deadline = time.monotonic() + 30
    while queue.depths().in_flight < len(keys) + 1 and time.monotonic() < deadline:  # + s3:TestEvent
        time.sleep(0.2)
    assert queue.depths().in_flight == len(keys) + 1, "the poller did not receive the messages"
    assert DeltaChangelog(uri).head_version() == -1  # the batch is open: nothing committed yet
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    got = pa.table(DeltaChangelog(uri).read_versions(-1)).column("key").to_pylist()
    assert sorted(got) == sorted(keys)
    depths = queue.depths()
    assert (depths.visible, depths.in_flight) == (0, 0)
    summary = [json.loads(x) for x in err.splitlines() if '"event": "summary"' in x]
    assert summary and summary[0]["rows"] == len(keys) and summary[0]["commits"] == 1
    assert "SIGTERM" in err
