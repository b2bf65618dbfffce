"""`lakeinlet-load status` and config errors on the emulator (no Spark needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import Stack
from lakeinlet.incremental.job import main

pytestmark = pytest.mark.integration


def test_status_shows_queue_depth_head_and_checkpoint(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                      capsys: Any) -> None:
    client("s3", aws).put_object(Bucket=stack.bucket, Key="x.json", Body=b"{}\n")
    code = main(["status", "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t"),
                 "--queue-url", stack.queue_url, "--dlq-url", stack.dlq_url,
                 "--endpoint-url", stack.endpoint])
    out = capsys.readouterr().out
    assert code == 0
    assert "queue: 2 visible" in out  # s3:TestEvent + the put
    assert "dlq:   0 visible" in out
    assert "head version -1" in out and "checkpoint: none" in out


def test_missing_required_settings_exit_2_listing_them(capsys: Any) -> None:
    assert main(["run", "--max-files", "0"]) == 2
    err = capsys.readouterr().err
    assert "--changelog: required" in err and "--table: required" in err and "--max-files" in err


def test_status_finds_the_dlq_from_the_redrive_policy(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                      capsys: Any) -> None:
    client("sqs", aws).send_message(QueueUrl=stack.dlq_url, MessageBody="dead letter")
    code = main(["status", "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t"),
                 "--queue-url", stack.queue_url, "--endpoint-url", stack.endpoint])
    assert code == 0
    assert "dlq:   1 visible" in capsys.readouterr().out
