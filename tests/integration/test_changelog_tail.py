"""The loader's read of the versions after its checkpoint, straight from the commit files
(lakeinlet.changelog.tail), against delta-rs's change data feed on the same changelog: local and on
moto S3, over every kind of commit lakeinlet writes; and the fallback when a version holds more."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.log_store import store_for
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.changelog.tail import ChangelogTail, parse_commit
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.storage import storage_options
from tests.conftest import received_rows

pytestmark = pytest.mark.integration


def change_feed(uri: str, aws: AwsSection, after: int, until: int) -> list[dict[str, Any]]:
    """delta-rs's change data feed of versions after+1..until, as sorted rows."""
    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    rows = pa.table(dt.load_cdf(starting_version=after + 1, ending_version=until).read_all()).to_pylist()
    for r in rows:
        del r["_change_type"]
    return _sorted(rows)


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:  # delta-rs gives the commit time without a zone; the tail says UTC
        r["_commit_timestamp"] = r["_commit_timestamp"].replace(tzinfo=None)
    return sorted(rows, key=lambda r: (r["_commit_version"], r["event_id"]))


def build(uri: str, aws: AwsSection) -> DeltaTable:
    """delta-rs creates the table; blind appends, another delta-rs append, a property change
    (metaData, same schema) and a compaction (dataChange=false) follow."""
    theirs, ours = DeltaChangelog(uri, aws), OpenDeltaChangelog(uri, aws)
    theirs.append(received_rows("t0", 3), {"poll_batch": "t0"})
    for i in range(3):
        ours.append(received_rows(f"o{i}", 4), {"poll_batch": f"o{i}"})
    theirs.append(received_rows("t1", 2), {"poll_batch": "t1"})
    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    dt.alter.set_table_properties({"delta.logRetentionDuration": "interval 60 days"})
    dt.optimize.compact()
    ours.append(received_rows("o3", 5), {"poll_batch": "o3"})
    dt.update_incremental()
    return dt


def same_reads(uri: str, aws: AwsSection, ranges: list[tuple[int, int]]) -> None:
    tail = ChangelogTail(uri, aws)
    for after, until in ranges:
        got = tail.rows(after, until)
        assert got is not None, (after, until)  # read from the commit files, not through delta-rs
        assert _sorted(got.to_pylist()) == change_feed(uri, aws, after, until), (after, until)


def test_the_tail_reads_what_the_change_feed_reads(changelog_location: tuple[str, AwsSection]) -> None:
    uri, aws = changelog_location
    dt = build(uri, aws)
    head = int(dt.version())
    same_reads(uri, aws, [(-1, head), (-1, 0), (0, 3), (3, head), (head - 1, head), (4, head - 1)])
    dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)  # the compacted files go
    OpenDeltaChangelog(uri, aws).append(received_rows("o4", 1), {"poll_batch": "o4"})
    dt.update_incremental()
    ops = [h["operation"] for h in dt.history()]
    assert {"SET TBLPROPERTIES", "OPTIMIZE", "VACUUM START", "VACUUM END"} <= set(ops)
    same_reads(uri, aws, [(head - 1, int(dt.version())), (head, int(dt.version()))])
    assert ChangelogTail(uri, aws).rows(-1, head) is None  # files vacuumed: delta-rs says what is gone
    assert ChangelogTail(uri, aws).rows(head, int(dt.version()) + 1) is None  # beyond the head
    changelog, head = DeltaChangelog(uri, aws), int(dt.version())
    for after, limit in [(-1, 3), (2, 64), (head - 2, 10)]:
        fast = changelog.commits(after, limit)
        assert [c.version for c in fast] == list(range(after + 1, min(after + limit, head) + 1))
        assert fast == [c for c in changelog.commits() if c.version > after][:limit]


def test_the_first_versions_after_a_position_not_the_newest(
        changelog_location: tuple[str, AwsSection]) -> None:
    """A loader far behind reads the versions after its position, up to the window, through the
    tail and through delta-rs alike (delta-rs's history gives the newest first)."""
    uri, aws = changelog_location
    ours = OpenDeltaChangelog(uri, aws)
    for i in range(12):
        ours.append(received_rows(f"b{i}", 1), {"poll_batch": f"b{i}"})
    changelog = DeltaChangelog(uri, aws)
    assert [c.version for c in changelog.commits(after=2, limit=4)] == [3, 4, 5, 6]
    changelog._tail.commits = lambda after, limit: None  # type: ignore[method-assign]
    assert [c.version for c in changelog.commits(after=2, limit=4)] == [3, 4, 5, 6]


def test_a_version_the_tail_cannot_read_is_read_through_delta_rs(
        changelog_location: tuple[str, AwsSection]) -> None:
    """A data file without one of the changelog's columns (another writer's older schema):
    the tail declines, delta-rs reads it (the column is null there)."""
    uri, aws = changelog_location
    OpenDeltaChangelog(uri, aws).append(received_rows("a", 2), {"poll_batch": "a"})
    store = store_for(uri, aws)
    first = store.get("_delta_log/00000000000000000000.json")
    assert first is not None
    add = next(json.loads(line)["add"] for line in first.splitlines() if b'"add"' in line)
    narrow = pa.table(DeltaTable(uri, storage_options=storage_options(aws, uri)).load_cdf(
        starting_version=0, ending_version=0).read_all()).drop_columns(
        ["region", "received_date", "_change_type", "_commit_version", "_commit_timestamp"])
    sink = pa.BufferOutputStream()
    pq.write_table(narrow, sink)
    data = sink.getvalue().to_pybytes()
    path = add["path"].replace("part-", "part-narrow-")
    store.put(path, data)
    info = {"timestamp": 1, "operation": "WRITE", "operationMetrics": {"num_added_rows": 2}}
    commit = [{"commitInfo": info},
              {"add": add | {"path": path, "size": len(data), "stats": None}}]
    assert store.put_if_absent("_delta_log/00000000000000000001.json",
                               "\n".join(json.dumps(c) for c in commit).encode())
    assert ChangelogTail(uri, aws).rows(0, 1) is None
    got = pa.table(DeltaChangelog(uri, aws).read_versions(0, 1))
    assert got.num_rows == 2 and got.column("region").null_count == 2


@pytest.mark.parametrize(("action", "why"), [
    ({"cdc": {"path": "_change_data/x.parquet", "dataChange": False}}, "cdc action"),
    ({"remove": {"path": "p", "dataChange": True}}, "removes rows"),
    ({"add": {"path": "p", "dataChange": True, "deletionVector": {"storageType": "u"}}}, "deletion vector"),
    ({"protocol": {"minReaderVersion": 3, "minWriterVersion": 7}}, "reader version 3"),
    ({"metaData": {"partitionColumns": [], "schemaString": "{}", "configuration": {}}}, "schema"),
    ({"domainMetadata": {"domain": "d"}}, "domainMetadata"),
])
def test_commits_only_a_full_reader_reads_say_why(action: dict[str, Any], why: str) -> None:
    body = "\n".join(json.dumps(a) for a in [{"commitInfo": {"timestamp": 1}}, action]).encode()
    problem = parse_commit(7, body).problem
    assert problem is not None and why in problem


def test_compaction_and_markers_carry_no_rows() -> None:
    body = "\n".join(json.dumps(a) for a in [
        {"commitInfo": {"timestamp": 1, "operation": "OPTIMIZE"}},
        {"add": {"path": "d=1/new.parquet", "partitionValues": {"received_date": "1"}, "dataChange": False}},
        {"remove": {"path": "d=1/old.parquet", "dataChange": False}}]).encode()
    commit = parse_commit(3, body)
    assert commit.problem is None and commit.files == ()


def test_a_cleaned_up_version_is_not_read_as_caught_up(changelog_location: tuple[str, AwsSection]) -> None:
    """Log cleanup removed versions 0 and 1: a loader at 0 must hear about it from delta-rs,
    not find "no new versions"; a loader at 1 reads 2 and 3 from the commit files."""
    uri, aws = changelog_location
    ours = OpenDeltaChangelog(uri, aws)
    for i in range(4):
        ours.append(received_rows(f"b{i}", 1), {"poll_batch": f"b{i}"})
    for v in (0, 1):
        if uri.startswith("s3://"):
            bucket, prefix = uri[len("s3://"):].split("/", 1)
            client("s3", aws).delete_object(Bucket=bucket, Key=f"{prefix}/_delta_log/{v:020d}.json")
        else:
            (Path(uri) / "_delta_log" / f"{v:020d}.json").unlink()
    tail = ChangelogTail(uri, aws)
    assert tail.commits(0, 10) is None
    assert tail.commits(-1, 10) is None
    assert [c.version for c in tail.commits(1, 10) or []] == [2, 3]
    assert tail.commits(3, 10) == []
