"""The poller's open-table changelog writer, local and on moto S3, beside another writer."""

from __future__ import annotations

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.changelog.writer import OpenDeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.integration


def test_appends_interleaved_with_another_writer_lose_nothing(
        changelog_location: tuple[str, AwsSection]) -> None:
    path, aws = changelog_location
    ours, theirs = OpenDeltaChangelog(path, aws), DeltaChangelog(path, aws)
    assert ours.append([], {"poll_batch": "empty"}) == -1
    versions = [ours.append(received_rows("a0", 2), {"poll_batch": "a0"}),
                ours.append(received_rows("a1", 2), {"poll_batch": "a1"}),
                theirs.append(received_rows("b0", 2), {"poll_batch": "b0"}),
                ours.append(received_rows("a2", 2), {"poll_batch": "a2"})]  # its open table is stale here
    assert versions == [0, 1, 2, 3]
    table = pa.table(theirs.read_versions(-1))
    assert sorted(set(table.column("poll_batch").to_pylist())) == ["a0", "a1", "a2", "b0"]
    assert table.num_rows == 8
    assert [c.metadata["poll_batch"] for c in theirs.commits()] == ["a0", "a1", "b0", "a2"]
