"""`lakeinlet-load status` and config errors on the emulator (no Spark needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.incremental.job import main
from tests.conftest import received_rows

pytestmark = pytest.mark.integration
NO_CHANGELOG = ("--changelog {}: no changelog table there. On a new deployment the poller (lakeinlet-poll) "
                "creates it with its first commit: start the poller and wait for its first batch (or run "
                "`lakeinlet-load backfill`), then run this again; otherwise fix --changelog")


def test_status_shows_queue_depth_head_and_checkpoint(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                      capsys: Any) -> None:
    """A new deployment: the queues' depth, then one line saying the changelog is not there yet
    and what to do (exit 2); once the poller committed, the head and the checkpoint."""
    client("s3", aws).put_object(Bucket=stack.bucket, Key="x.json", Body=b"{}\n")
    flags = ["--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t"),
             "--queue-url", stack.queue_url, "--dlq-url", stack.dlq_url, "--endpoint-url", stack.endpoint]
    assert main(["status", *flags]) == 2
    out, err = capsys.readouterr()
    assert "queue: 2 visible" in out  # s3:TestEvent + the put
    assert "dlq:   0 visible" in out
    assert err.strip().splitlines()[-1] == f"error: {NO_CHANGELOG.format(tmp_path / 'cl')}"
    DeltaChangelog(str(tmp_path / "cl")).append(received_rows("p1", 1), {"poll_batch": "p1"})
    assert main(["status", *flags]) == 0
    out = capsys.readouterr().out
    assert "head version 0" in out and "checkpoint: none" in out


@pytest.mark.parametrize("command", [["run", "--drain"], ["checkpoint", "show"],
                                     ["checkpoint", "reset", "--to-latest"]])
def test_a_changelog_that_is_not_there_is_one_line_and_exit_2(command: list[str], tmp_path: Path,
                                                              capsys: Any) -> None:
    """It loaded nothing and exited 0, so a wrong --changelog looked like a quiet day."""
    assert main([*command, "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"error: {NO_CHANGELOG.format(tmp_path / 'cl')}"
    assert "Traceback" not in err and not (tmp_path / "t").exists()


def test_missing_required_settings_exit_2_listing_them(capsys: Any) -> None:
    assert main(["run", "--max-files", "0"]) == 2
    err = capsys.readouterr().err
    assert "--changelog: required" in err and "--table: required" in err and "--max-files" in err


def test_status_finds_the_dlq_from_the_redrive_policy(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                      capsys: Any) -> None:
    client("sqs", aws).send_message(QueueUrl=stack.dlq_url, MessageBody="dead letter")
    code = main(["status", "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t"),
                 "--queue-url", stack.queue_url, "--endpoint-url", stack.endpoint])
    assert code == 2  # no changelog yet: the queues are shown before that error
    assert "dlq:   1 visible" in capsys.readouterr().out
