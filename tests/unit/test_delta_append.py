"""The poller's blind-append changelog writer on a local folder: what delta-rs reads back, taken
versions, an uncertain commit, another writer's metadata change, the fallback, checkpoints."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError, ResponseStreamingError
from deltalake import DeltaTable, write_deltalake

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.blind_append import DeltaAppender, LogState, TableChanged, log_path
from lakeinlet.changelog.log_store import PUT_ATTEMPTS, LocalStore, S3Store
from lakeinlet.changelog.reader import DeltaChangelog, changelog_table
from lakeinlet.changelog.schema import to_changelog_table
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.events import ObjectEvent, ReceivedEvent
from tests.conftest import received_rows

pytestmark = pytest.mark.unit


def test_blind_appends_read_back_with_history_metadata_and_change_feed(tmp_path: Path) -> None:
    ours = OpenDeltaChangelog(str(tmp_path / "cl"))
    versions = [ours.append(received_rows(f"b{i}", 3), {"poll_batch": f"b{i}"}) for i in range(4)]
    assert versions == [0, 1, 2, 3]
    reader = DeltaChangelog(str(tmp_path / "cl"))
    assert [(c.version, c.rows, c.metadata) for c in reader.commits()] == [
        (i, 3, {"poll_batch": f"b{i}", "bytes": "3"}) for i in range(4)]  # three 1-byte objects
    table = pa.table(reader.read_versions(after=0))
    assert sorted(table.column("poll_batch").to_pylist()) == ["b1"] * 3 + ["b2"] * 3 + ["b3"] * 3
    assert DeltaTable(str(tmp_path / "cl")).count() == 12


def test_rows_cross_midnight_into_two_partitions(tmp_path: Path) -> None:
    late = datetime(2026, 3, 1, 23, 59, 59, 999_999, tzinfo=UTC)
    rows = [ReceivedEvent(ObjectEvent("b", f"k{i}", "ObjectCreated:Put", late, 1, f"e{i}"), f"m{i}",
                          late + timedelta(microseconds=i), "p") for i in range(2)]
    ours = OpenDeltaChangelog(str(tmp_path / "cl"))
    ours.append(received_rows("first", 1), {"poll_batch": "first"})
    ours.append(rows, {"poll_batch": "p"})
    got = sorted(pa.table(DeltaChangelog(str(tmp_path / "cl")).read_versions(after=0)).to_pylist(),
                 key=lambda r: str(r["key"]))  # string_view columns: Arrow does not sort them
    assert [r["received_date"] for r in got] == ["2026-03-01", "2026-03-02"]
    assert [r["received_at"] for r in got] == [r.received_at for r in rows]


def test_columnar_build_equals_the_row_wise_one() -> None:
    naive = datetime(2026, 1, 1, 12, 0, 0, 1)
    other = datetime.now(UTC).astimezone()
    rows = [*received_rows("b", 3),
            ReceivedEvent(ObjectEvent("b", "k", "ObjectRemoved:Delete", naive, None, None, "v", "s", "eu",
                                      "sns"), "m", other, "p")]
    assert changelog_table(rows).equals(to_changelog_table(rows))


class UncertainStore(LocalStore):
    """Its first conditional PUT lands but reports the name as taken (a retried PUT's answer)."""

    uncertain = 1

    def put_if_absent(self, path: str, data: bytes) -> bool:
        landed = super().put_if_absent(path, data)
        if landed and self.uncertain:
            self.uncertain -= 1
            return False
        return landed


def test_a_commit_that_landed_unseen_is_not_committed_twice(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    DeltaChangelog(uri).append(received_rows("first", 1), {"poll_batch": "first"})
    appender = DeltaAppender(UncertainStore(uri), LogState(0), lambda: LogState(0))
    assert appender.append(changelog_table(received_rows("b", 2)), {"poll_batch": "b"}) == 1
    assert appender.append(changelog_table(received_rows("c", 2)), {"poll_batch": "c"}) == 2
    assert appender.conflicts == 0  # our own PUT, found landed, is not another writer's
    assert [c.metadata["poll_batch"] for c in DeltaChangelog(uri).commits()] == ["first", "b", "c"]


def test_versions_taken_by_another_writer_are_skipped(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    theirs = DeltaChangelog(uri)
    theirs.append(received_rows("t0", 1), {"poll_batch": "t0"})
    refreshed: list[int] = []
    appender = DeltaAppender(LocalStore(uri), LogState(0),
                             lambda: refreshed.append(1) or LogState(DeltaTable(uri).version()))
    for i in range(1, 3):
        theirs.append(received_rows(f"t{i}", 1), {"poll_batch": f"t{i}"})
    assert appender.append(changelog_table(received_rows("ours", 2)), {"poll_batch": "ours"}) == 3
    assert refreshed == []  # two taken versions are stepped over, not re-read
    assert appender.conflicts == 2  # counted: the poller's summary reports them
    assert [c.metadata["poll_batch"] for c in DeltaChangelog(uri).commits()] == ["t0", "t1", "t2", "ours"]


def test_another_writers_metadata_change_is_seen(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    DeltaChangelog(uri).append(received_rows("t0", 1), {"poll_batch": "t0"})
    appender = DeltaAppender(LocalStore(uri), LogState(0), lambda: LogState(1, problem="new column"))
    DeltaTable(uri).alter.set_table_properties({"delta.logRetentionDuration": "interval 60 days"})
    with pytest.raises(TableChanged, match="new column"):
        appender.append(changelog_table(received_rows("ours", 1)), {"poll_batch": "ours"})


def test_a_table_with_a_constraint_is_written_through_delta_rs(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    DeltaChangelog(uri).append(received_rows("t0", 1), {"poll_batch": "t0"})
    DeltaTable(uri).alter.add_constraint({"size_ok": "size >= 0"})
    ours = OpenDeltaChangelog(uri)
    assert ours.append(received_rows("ours", 2), {"poll_batch": "ours"}) == 2
    last = json.loads((tmp_path / "cl" / log_path(2)).read_text().splitlines()[0])["commitInfo"]
    assert last["clientVersion"].startswith("delta-rs")  # not a blind append of ours


def test_required_columns_without_values_are_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    DeltaChangelog(uri).append(received_rows("t0", 1), {"poll_batch": "t0"})
    table = changelog_table(received_rows("b", 2))
    broken = table.set_column(1, table.schema.field(1), pa.array([None, "b"], pa.string()))
    with pytest.raises(ValueError, match="bucket"):
        DeltaAppender(LocalStore(uri), LogState(0), lambda: LogState(0)).append(broken, {})
    assert DeltaTable(uri).version() == 0


def test_checkpoints_are_written_every_interval(tmp_path: Path) -> None:
    uri = str(tmp_path / "cl")
    write_deltalake(uri, changelog_table(received_rows("t0", 1)), partition_by=["received_date"],
                    configuration={"delta.enableChangeDataFeed": "true", "delta.appendOnly": "true",
                                   "delta.checkpointInterval": "5"})
    ours = OpenDeltaChangelog(uri)
    for i in range(11):
        ours.append(received_rows(f"b{i}", 1), {"poll_batch": f"b{i}"})
    log = sorted(p.name for p in (tmp_path / "cl" / "_delta_log").glob("*.checkpoint.parquet"))
    assert log == [f"{v:020d}.checkpoint.parquet" for v in (5, 10)]
    assert DeltaTable(uri).count() == 12


class CutBody:
    """A GetObject body whose read breaks off, as a connection reset mid-body does."""

    def read(self) -> bytes:
        raise ResponseStreamingError(error="IncompleteRead(16 bytes read, 1008 more expected)")


class FlakyS3:
    """get_object answers with a cut body `cuts` times, then with the object's bytes."""

    def __init__(self, cuts: int) -> None:
        self.cuts, self.calls = cuts, 0

    def get_object(self, **_: object) -> dict[str, object]:
        self.calls += 1
        return {"Body": CutBody() if self.calls <= self.cuts else io.BytesIO(b"commit")}


def test_a_log_read_cut_short_is_read_again() -> None:
    s3, sleeps = FlakyS3(cuts=2), []
    assert S3Store("s3://b/cl", AwsSection(), s3, sleep=sleeps.append).get(log_path(3)) == b"commit"
    assert s3.calls == 3 and len(sleeps) == 2


def test_a_log_read_that_keeps_breaking_is_a_transient_error() -> None:
    s3 = FlakyS3(cuts=5)
    with pytest.raises(TransientError, match="IncompleteRead"):
        S3Store("s3://b/cl", AwsSection(), s3, sleep=lambda s: None).get(log_path(3))
    assert s3.calls == 3


def s3_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"{code} happened"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")


class RacingS3:
    """put_object fails with `error` `times` times, then succeeds."""

    def __init__(self, error: ClientError, times: int) -> None:
        self.error, self.times, self.calls = error, times, 0

    def put_object(self, **_: object) -> dict[str, object]:
        self.calls += 1
        if self.calls <= self.times:
            raise self.error
        return {}


def test_a_conditional_put_that_raced_another_is_asked_again() -> None:
    s3, sleeps = RacingS3(s3_error("ConditionalRequestConflict", 409), times=2), []
    assert S3Store("s3://b/cl", AwsSection(), s3, sleep=sleeps.append).put_if_absent(log_path(3), b"c")
    assert s3.calls == 3 and len(sleeps) == 2


def test_a_conditional_put_that_keeps_racing_is_a_transient_error() -> None:
    s3 = RacingS3(s3_error("ConditionalRequestConflict", 409), times=50)
    with pytest.raises(TransientError, match="ConditionalRequestConflict"):
        S3Store("s3://b/cl", AwsSection(), s3, sleep=lambda s: None).put_if_absent(log_path(3), b"c")
    assert s3.calls == PUT_ATTEMPTS


@pytest.mark.parametrize(("error", "outcome"), [
    (s3_error("PreconditionFailed", 412), False),  # the version is taken: the appender's protocol
    (s3_error("AccessDenied", 403), TerminalError),
    (s3_error("ServiceUnavailable", 503), TransientError),  # botocore retried it already
])
def test_other_put_answers_are_not_retried_here(error: ClientError, outcome: object) -> None:
    s3 = RacingS3(error, times=50)
    store = S3Store("s3://b/cl", AwsSection(), s3, sleep=lambda s: None)
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            store.put_if_absent(log_path(3), b"c")
    else:
        assert store.put_if_absent(log_path(3), b"c") is outcome
    assert s3.calls == 1
