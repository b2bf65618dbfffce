"""The changelog table (Delta, written and read with delta-rs), one row per object event: the event
source appends one commit per poll batch, the loader reads the rows the commits after its
checkpoint added (from their commit files through `tail`, else through the change data feed)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import PostCommitHookProperties

from lakeinlet import fast_paths
from lakeinlet.aws import AwsSection
from lakeinlet.changelog.schema import CHANGELOG_PARTITION_BY, CHANGELOG_SCHEMA
from lakeinlet.changelog.tail import ChangelogTail
from lakeinlet.delta_io import LatestTable, open_table
from lakeinlet.errors import TransientError
from lakeinlet.events import ReceivedEvent
from lakeinlet.retry import transient
from lakeinlet.storage import TableLocation

TABLE_PROPERTIES = {"delta.enableChangeDataFeed": "true", "delta.appendOnly": "true"}
"""The change data feed of an append-only table: the loader reads it, and appends write no extra
change data files for it."""
META_PREFIX = "lakeinlet."
_EPOCH, _MICRO = datetime(1970, 1, 1, tzinfo=UTC), timedelta(microseconds=1)
_TS = CHANGELOG_SCHEMA.field("event_time").type
# delta-rs retries a commit that lost the race for a version (15 times by default, at once). Pollers
# appending blind commit far faster than delta-rs re-reads the log, so under a burst of them (several
# pollers and a backfill on one changelog) it can lose every one of those races. Each append gets
# more tries, then a few more rounds after a random pause (tests/unit/test_changelog_append_retry.py).
COMMIT_RETRIES, COMMIT_ROUNDS, ROUND_PAUSE_S = 50, 5, 0.5
KEEP_LOGS = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)
"""An append writes log checkpoints but deletes no old log file: the loader appends here (backfill)
under a role that may not delete in the changelog, and its history is `maintain`'s to keep."""


def changelog_table(rows: list[ReceivedEvent]) -> pa.Table:
    """The Arrow table of one commit's rows (CHANGELOG_SCHEMA), built column by column.

    Same result as `schema.to_changelog_table` for less CPU (the row-wise build was most of the
    changelog's cost per event in the poller, which bench/poller.py's in-process stage measures):
    timestamps become epoch microseconds here instead of datetimes converted one by one by Arrow,
    and the partition's day is computed by Arrow from them (UTC).
    """
    ev = [r.event for r in rows]
    received = pa.array(_micros(r.received_at for r in rows), pa.int64()).view(_TS)
    columns = [[e.event_id for e in ev], [e.bucket for e in ev], [e.key for e in ev],
               [e.size for e in ev], [e.etag for e in ev], [e.version_id for e in ev],
               [e.sequencer for e in ev], [e.event_name for e in ev], _micros(e.event_time for e in ev),
               [e.region for e in ev], [e.envelope for e in ev], [r.message_id for r in rows],
               received, [r.poll_batch for r in rows], _days(received)]
    arrays = [c if isinstance(c, pa.Array) else
              pa.array(c, pa.int64()).view(_TS) if f.type == _TS else pa.array(c, f.type)
              for c, f in zip(columns, CHANGELOG_SCHEMA, strict=True)]
    return pa.Table.from_arrays(arrays, schema=CHANGELOG_SCHEMA)


def _days(timestamps: pa.Array) -> pa.Array:
    """The UTC day (YYYY-MM-DD) of each timestamp."""
    return pc.strftime(timestamps.cast(pa.timestamp("us", tz="UTC")), format="%Y-%m-%d")


def _micros(values: Any) -> list[int]:
    """Epoch microseconds of datetimes (naive ones are taken as UTC, as Arrow takes them)."""
    return [((d if d.tzinfo else d.replace(tzinfo=UTC)) - _EPOCH) // _MICRO for d in values]


@dataclass(frozen=True)
class CommitInfo:
    """One changelog commit as the loader's planner and `checkpoint show` see it."""

    version: int
    timestamp: datetime
    rows: int
    metadata: dict[str, str]

    @property
    def bytes(self) -> int | None:
        """Bytes of the objects its events announce (None: a commit written before lakeinlet
        recorded them, or by another writer)."""
        text = self.metadata.get("bytes")
        return int(text) if text and text.isdigit() else None


class DeltaChangelog:
    """The changelog at `uri` (local path or s3://); created on first append."""

    def __init__(self, uri: str | TableLocation, aws: AwsSection | None = None) -> None:
        self.location = TableLocation.of(uri)
        self.uri = self.location.uri
        self._options = self.location.options(aws or AwsSection())
        self._latest = LatestTable(self.uri, self._options)
        self._tail = ChangelogTail(self.uri, aws or AwsSection())

    def table(self, version: int | None = None) -> DeltaTable | None:
        """The changelog as a delta-rs table (newest or `version`), or None before the first commit.

        The newest is kept open and brought up to date with the commits since (a loader that
        runs on reads only those, not the log since the last checkpoint, on every batch)."""
        return self._latest.get() if version is None else open_table(self.uri, self._options, version)

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        """Commit `rows` as one new version, with `metadata` (keys prefixed `lakeinlet.`).

        Returns the committed version. An empty `rows` commits nothing and returns the head.
        """
        if not rows:
            return self.head_version()
        props = CommitProperties(custom_metadata={META_PREFIX + k: v for k, v in
                                                  commit_metadata(rows, metadata).items()},
                                 max_commit_retries=COMMIT_RETRIES)
        data = changelog_table(rows)
        rounds = transient(COMMIT_ROUNDS, sleep=time.sleep, on=_LostEveryRace, first_wait=ROUND_PAUSE_S,
                           max_wait=ROUND_PAUSE_S * (COMMIT_ROUNDS - 1), jitter=True)
        try:
            rounds(self._write, data, props)
        except _LostEveryRace as lost:
            raise lost.error from None
        dt = self.table()
        assert dt is not None
        return int(dt.version())

    def _write(self, data: pa.Table, props: CommitProperties) -> None:
        try:
            write_deltalake(self.uri, data, mode="append", partition_by=CHANGELOG_PARTITION_BY,
                            configuration=TABLE_PROPERTIES, storage_options=self._options,
                            commit_properties=props, post_commithook_properties=KEEP_LOGS)
        except CommitFailedError as exc:  # no version taken: every try found its version written
            raise _LostEveryRace(exc) from exc

    def head_version(self) -> int:
        """The newest committed version, or -1 when the table does not exist yet."""
        dt = self.table()
        return -1 if dt is None else int(dt.version())

    def read_versions(self, after: int, until: int | None = None) -> pa.Table:
        """Rows added by versions `after+1 .. until` (inclusive), with `_commit_version` and
        `_commit_timestamp` columns; an empty table (same columns) when there are none.

        With `until`, the rows are read from those versions' commit files when they hold only
        what lakeinlet writes (see `tail.ChangelogTail`), else through delta-rs's change data feed."""
        if until is not None and until > after and fast_paths.enabled("changelog-tail"):
            fast = self._tail.rows(after, until)
            if fast is not None:
                return fast
        dt = self._latest.current() if until is not None else None
        if dt is None or int(dt.version()) < (until or 0):  # the open version covers `until`: no update
            dt = self.table()
        head = -1 if dt is None else int(dt.version())
        last = head if until is None else min(until, head)
        if dt is None or last <= after:
            return _empty_read()
        reader = dt.load_cdf(starting_version=after + 1, ending_version=last,
                             columns=[*CHANGELOG_SCHEMA.names, "_commit_version", "_commit_timestamp"])
        table = pa.table(reader.read_all())  # delta-rs returns an arro3 table
        return table.drop_columns([c for c in ("_change_type",) if c in table.column_names])

    def commits(self, after: int = -1, limit: int | None = None) -> list[CommitInfo]:
        """Commit history after version `after`, oldest first: all of it, or the first `limit`
        versions (metadata query, no data read). With `limit`, read from those versions' commit
        files (see `tail.ChangelogTail`) when they are there, else through delta-rs."""
        if limit is not None and fast_paths.enabled("changelog-tail"):
            tail = self._tail.commits(after, limit)
            if tail is not None:
                return [_commit_info({**c.info, "version": c.version}) for c in tail]
        dt = self.table()
        if dt is None:
            return []
        out = [_commit_info(h) for h in dt.history(max(int(dt.version()) - after, 0))
               if int(h["version"]) > after]
        return sorted(out, key=lambda c: c.version)[:limit]

    def version_at(self, when: datetime) -> int:
        """The newest version committed at or before `when` (-1 if none): resolves --to-time.
        Commits are read by file name up to the head (delta-rs history numbers the files it
        lists from the version it opened, so one committed meanwhile shifts every label)."""
        dt = self.table()
        if dt is None:
            return -1
        best = -1
        for c in self.commits(-1, int(dt.version()) + 1):
            if c.timestamp <= when:
                best = c.version
        return best


class _LostEveryRace(TransientError):
    """delta-rs took no version: every one of its tries found its version written by another."""

    def __init__(self, error: CommitFailedError) -> None:
        super().__init__(str(error))
        self.error = error


def commit_metadata(rows: list[ReceivedEvent], metadata: dict[str, str]) -> dict[str, str]:
    """A commit's metadata with the bytes its events announce (what `status` gives the lag in)."""
    return {"bytes": str(sum(r.event.size or 0 for r in rows))} | metadata


def _commit_info(h: dict[str, Any]) -> CommitInfo:
    metrics = h.get("operationMetrics") or {}
    meta = {k[len(META_PREFIX):]: str(v) for k, v in h.items() if k.startswith(META_PREFIX)}
    return CommitInfo(version=int(h["version"]),
                      timestamp=datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC),
                      rows=int(metrics.get("num_added_rows", 0)), metadata=meta)


def _empty_read() -> pa.Table:
    schema = CHANGELOG_SCHEMA.append(pa.field("_commit_version", pa.int64())).append(
        pa.field("_commit_timestamp", pa.timestamp("ms", tz="UTC")))
    return schema.empty_table()
