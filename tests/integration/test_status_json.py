"""`lakeinlet-load status --json` and `lakeinlet-poll status --json` on the emulator (no Spark): one
object per route or queue, holding exactly the keys the reference page documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.incremental.commands.status_json import FIELDS as LOAD_FIELDS
from lakeinlet.incremental.job import main as load
from lakeinlet.sources.job import main as poll
from lakeinlet.sources.status import FIELDS as POLL_FIELDS
from tests.conftest import received_rows

pytestmark = pytest.mark.integration


def _lines(capsys: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_load_status_json_is_one_object_per_route(stack: Stack, aws: AwsSection, tmp_path: Path,
                                                  capsys: Any) -> None:
    client("s3", aws).put_object(Bucket=stack.bucket, Key="x.json", Body=b"{}\n")
    client("sqs", aws).send_message(QueueUrl=stack.dlq_url, MessageBody="dead letter")
    changelog = str(tmp_path / "cl")
    DeltaChangelog(changelog).append(received_rows("p1", 3), {"poll_batch": "p1"})
    flags = ["--changelog", changelog, "--queue-url", stack.queue_url, "--endpoint-url", stack.endpoint]
    assert load(["status", *flags, "--table", str(tmp_path / "t"), "--json"]) == 0
    [one] = _lines(capsys)
    assert list(one) == [name for name, _, _ in LOAD_FIELDS]
    assert (one["route"], one["head"], one["checkpoint"], one["lag_versions"], one["lag_events"]) == \
        ("", 0, None, 1, 3)
    assert one["queue"] == {"visible": 2, "in_flight": 0, "delayed": 0}  # s3:TestEvent + the put
    assert one["dlq"] == {"visible": 1, "in_flight": 0, "delayed": 0}  # found from the RedrivePolicy
    assert (one["freshness_seconds"], one["last_batch_at"], one["catalog_in_step"]) == (None, None, None)
    assert one["cleanup_backlog"] is None  # --after-load off
    assert load(["status", *flags, "--table", str(tmp_path / "t"), "--json", "--after-load", "delete"]) == 0
    assert _lines(capsys)[0]["cleanup_backlog"] == {"due": 0, "waiting": 0}  # nothing loaded yet
    routes = tmp_path / "routes.toml"
    routes.write_text(f'[[route]]\nname = "a"\ntable = "{tmp_path / "a"}"\n'
                      f'[[route]]\nname = "b"\ntable = "{tmp_path / "b"}"\n', encoding="utf-8")
    assert load(["status", *flags, "--routes", str(routes), "--json"]) == 0
    both = _lines(capsys)
    assert [o["route"] for o in both] == ["a", "b"]
    assert [o["target"] for o in both] == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_poll_status_json_holds_every_key_with_or_without_a_changelog(
        stack: Stack, tmp_path: Path, capsys: Any) -> None:
    flags = ["status", "--queue-url", stack.queue_url, "--endpoint-url", stack.endpoint, "--json"]
    assert poll(flags) == 0
    [bare] = _lines(capsys)
    assert list(bare) == [name for name, _, _ in POLL_FIELDS]
    assert (bare["visible"], bare["dlq_visible"], bare["changelog_version"]) == (1, 0, None)  # TestEvent
    changelog = str(tmp_path / "cl")
    DeltaChangelog(changelog).append(received_rows("p1", 1), {"poll_batch": "p1"})
    assert poll([*flags, "--changelog", changelog]) == 0
    [report] = _lines(capsys)
    assert report["changelog_version"] == 0 and report["changelog_time"]
    assert 0 <= report["changelog_age_seconds"] < 600
