"""The lake in the landing bucket, the notification over the whole bucket (the Terraform module's
defaults before issue 35): the changelog's own commits notify the queue, and the poller
acknowledges them without a row instead of feeding on them for ever."""

from __future__ import annotations

import json

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.emulator import Stack
from lakeinlet.sources.job import main
from tests.integration.poller_helpers import poll_args, queue_counts, rows, upload

pytestmark = pytest.mark.integration


def summary(err: str) -> dict[str, object]:
    return next(json.loads(line) for line in reversed(err.splitlines()) if '"event": "summary"' in line)


def test_the_changelog_never_ingests_its_own_files(stack: Stack, aws: AwsSection,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    uri = f"s3://{stack.bucket}/lakeinlet/changelog"
    upload(stack, ["in/a.json", "in/b.json"])
    assert main(poll_args(stack, uri, "--log-format", "json")) == 0  # commits: notifications follow
    capsys.readouterr()
    upload(stack, ["in/c.json"])
    assert main(poll_args(stack, uri, "--log-format", "json")) == 0
    err = capsys.readouterr().err
    keys = sorted(str(r["key"]) for r in rows(uri, aws))
    assert keys == ["in/a.json", "in/b.json", "in/c.json"], f"expected the uploads only, found {keys}"
    assert int(str(summary(err)["own"])) > 0, "expected the changelog's own files counted as own"
    assert f"s3://{stack.bucket}/lakeinlet/changelog/" in err, "expected a line naming the location"
    assert main(poll_args(stack, uri, "--log-format", "json")) == 0  # only own events left: no commit,
    last = summary(capsys.readouterr().err)                           # so no new notification
    assert (last["commits"], last["rows"], queue_counts(stack)) == (0, 0, (0, 0)), last
