"""Opening and querying Delta tables with delta-rs: one place that knows a missing table is not an error."""

from __future__ import annotations

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError

from lakeinlet.aws import AwsSection
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


def query(uri: str, aws: AwsSection, sql: str) -> pa.Table:
    """Run `sql` over the Delta table at `uri` (registered as `t`) with delta-rs's SQL engine."""
    from deltalake import QueryBuilder

    where = TableLocation(uri)
    dt = DeltaTable(where.uri, storage_options=where.options(aws))
    return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all())
