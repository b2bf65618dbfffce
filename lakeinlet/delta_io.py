"""Opening and querying Delta tables with delta-rs: one place that knows a missing table is not an error."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError, TableNotFoundError

from lakeinlet.aws import AwsSection
from lakeinlet.errors import TransientError
from lakeinlet.retry import transient
from lakeinlet.storage import TableLocation


def open_table(uri: str, options: dict[str, str] | None, version: int | None = None) -> DeltaTable | None:
    """The Delta table at `uri` (at `version`, default the newest), or None if none exists yet."""
    try:
        return DeltaTable(uri, version=version, storage_options=options)
    except TableNotFoundError:
        return None


class LatestTable:
    """A Delta table kept open and brought up to date incrementally: opening it anew replays its
    log from the last checkpoint every time, a cost that grows with the commits since it."""

    def __init__(self, uri: str, options: dict[str, str] | None) -> None:
        self.uri, self.options = uri, options
        self._dt: DeltaTable | None = None

    def current(self) -> DeltaTable | None:
        """The version read last (no request), or None before the first `get`."""
        return self._dt

    def get(self) -> DeltaTable | None:
        """The newest version, or None while the table does not exist."""
        if self._dt is None:
            self._dt = open_table(self.uri, self.options)
        else:
            self._dt.update_incremental()
        return self._dt


RECORD_ROUNDS = 5  # tries of a record's commit that keeps losing to records of earlier versions


def record_version(write: Callable[[], None], recorded: Callable[[], int], version: int) -> None:
    """Commit `write`, a table's record of target `version` under its `txn` (`recorded`: the
    newest version recorded), once: nothing when it is there already. A commit lost to another
    writer's record of an *earlier* version (maintain's repair beside a live loader) is tried
    again on the newer log; lost to this version's own record, it is done."""
    def once() -> None:
        if version <= recorded():
            return
        try:
            write()
        except CommitFailedError as exc:
            if recorded() < version:
                raise _LostToEarlier(exc) from exc

    try:
        transient(RECORD_ROUNDS, on=_LostToEarlier, first_wait=0.05, max_wait=1.0, jitter=True)(once)
    except _LostToEarlier as lost:
        raise lost.error from None


class _LostToEarlier(TransientError):
    """A record's commit lost its `txn` to a record of an earlier target version."""

    def __init__(self, error: CommitFailedError) -> None:
        super().__init__(str(error))
        self.error = error


def query(uri: str, aws: AwsSection, sql: str) -> pa.Table:
    """Run `sql` over the Delta table at `uri` (registered as `t`) with delta-rs's SQL engine."""
    from deltalake import QueryBuilder

    where = TableLocation(uri)
    dt = DeltaTable(where.uri, storage_options=where.options(aws))
    return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all())
