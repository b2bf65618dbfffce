"""The poller's open-table changelog writer, local and on moto S3, beside another writer."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.sources.changelog_writer import OpenDeltaChangelog
from tests.conftest import unique

pytestmark = pytest.mark.integration


def _rows(batch: str, n: int) -> list[ReceivedEvent]:
    now = datetime.now(UTC)
    return [ReceivedEvent(ObjectEvent("bkt", f"{batch}/k{i}", "ObjectCreated:Put", now, 1, f"e{i}"),
                          f"{batch}-m{i}", now, batch) for i in range(n)]


@pytest.fixture(params=["local", "s3"])
def uri(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, AwsSection]:
    if request.param == "local":
        return str(tmp_path / "changelog"), AwsSection()
    aws: AwsSection = request.getfixturevalue("aws")
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/changelog", aws


def test_appends_interleaved_with_another_writer_lose_nothing(uri: tuple[str, AwsSection]) -> None:
    path, aws = uri
    ours, theirs = OpenDeltaChangelog(path, aws), DeltaChangelog(path, aws)
    assert ours.append([], {"poll_batch": "empty"}) == -1
    versions = [ours.append(_rows("a0", 2), {"poll_batch": "a0"}),
                ours.append(_rows("a1", 2), {"poll_batch": "a1"}),
                theirs.append(_rows("b0", 2), {"poll_batch": "b0"}),
                ours.append(_rows("a2", 2), {"poll_batch": "a2"})]  # its open table is stale here
    assert versions == [0, 1, 2, 3]
    table = pa.table(theirs.read_versions(-1))
    assert sorted(set(table.column("poll_batch").to_pylist())) == ["a0", "a1", "a2", "b0"]
    assert table.num_rows == 8
    assert [c.metadata["poll_batch"] for c in theirs.commits()] == ["a0", "a1", "b0", "a2"]
