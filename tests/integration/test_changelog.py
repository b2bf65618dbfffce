"""The Delta changelog adapter on a local path and on S3 (moto)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.integration


@pytest.fixture
def changelog(changelog_location: tuple[str, AwsSection]) -> DeltaChangelog:
    uri, aws = changelog_location
    return DeltaChangelog(uri, aws)


def test_missing_table_reads_as_empty(changelog: DeltaChangelog) -> None:
    assert changelog.head_version() == -1
    assert changelog.read_versions(-1).num_rows == 0
    assert changelog.commits() == []
    assert changelog.append([], {"poll_batch": "none"}) == -1


def test_append_commits_one_version_per_batch(changelog: DeltaChangelog) -> None:
    versions = [changelog.append(received_rows(f"b{i}", 3), {"poll_batch": f"b{i}"}) for i in range(3)]
    assert versions == [0, 1, 2]
    commits = changelog.commits()
    assert [(c.version, c.rows, c.metadata["poll_batch"]) for c in commits] == [
        (0, 3, "b0"), (1, 3, "b1"), (2, 3, "b2")]


def test_read_versions_returns_only_the_asked_commits(changelog: DeltaChangelog) -> None:
    for i in range(4):
        changelog.append(received_rows(f"b{i}", 2), {"poll_batch": f"b{i}"})
    table = changelog.read_versions(after=1, until=2)
    assert sorted(table.column("poll_batch").to_pylist()) == ["b2", "b2"]
    assert set(table.column("_commit_version").to_pylist()) == {2}
    assert sorted(set(changelog.read_versions(after=1).column("_commit_version").to_pylist())) == [2, 3]
    assert changelog.read_versions(after=3).num_rows == 0


def test_version_at_resolves_a_point_in_time(changelog: DeltaChangelog) -> None:
    before = datetime.now(UTC) - timedelta(days=1)
    changelog.append(received_rows("b0", 1), {"poll_batch": "b0"})
    changelog.append(received_rows("b1", 1), {"poll_batch": "b1"})
    assert changelog.version_at(before) == -1
    assert changelog.version_at(changelog.commits()[0].timestamp) == 0
    assert changelog.version_at(datetime.now(UTC) + timedelta(seconds=5)) == 1


def test_read_versions_returns_a_pyarrow_table(changelog: DeltaChangelog) -> None:
    import pyarrow as pa

    changelog.append(received_rows("b0", 2), {"poll_batch": "b0"})
    table = changelog.read_versions(after=-1)
    assert isinstance(table, pa.Table)
    assert table.num_rows == 2 and "_change_type" not in table.column_names
