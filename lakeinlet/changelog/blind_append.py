"""Blind appends to the changelog without replaying its Delta log: the poller's hot path. One
Parquet file per partition, then `_delta_log/<version>.json` put if absent (the next version when
another writer took it); a protocol or metadata change sends the caller back to delta-rs."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lakeinlet import __version__
from lakeinlet.changelog.log_store import LogStore
from lakeinlet.changelog.reader import META_PREFIX
from lakeinlet.changelog.schema import CHANGELOG_PARTITION_BY

PARTITION = CHANGELOG_PARTITION_BY[0]
STATS_COLUMNS = ("event_time", "received_at")
"""Columns with min/max statistics in each `add` (numRecords always): the time columns a reader
may prune on; the rest would cost CPU on every commit for no reader of the changelog."""
JUMP_AFTER = 16
"""Versions found taken in a row before the head is re-read instead of tried one by one."""


@dataclass(frozen=True)
class LogState:
    """What the appender knows of the table, read with delta-rs (`refresh`)."""

    version: int
    checkpoint_interval: int = 100
    problem: str | None = None
    """Why this table needs more than a blind append (the caller then writes with delta-rs)."""


class TableChanged(Exception):
    """Another writer changed the table so that blind appends no longer fit (see the message)."""


def log_path(version: int) -> str:
    return f"_delta_log/{version:020d}.json"


class DeltaAppender:
    """Appends Arrow tables (the changelog schema) as Delta commits through a LogStore."""

    def __init__(self, store: LogStore, state: LogState, refresh: Callable[[], LogState],
                 clock: Callable[[], float] = time.time) -> None:
        self._store, self._refresh, self._clock = store, refresh, clock
        self.state = state
        self._next = state.version + 1
        self.conflicts = 0
        """Versions found taken by another writer so far (each cost one GET and another try)."""

    def append(self, table: pa.Table, metadata: dict[str, str]) -> int:
        """Write `table`'s files, then commit them as one version; returns the version.

        Raises:
            TableChanged: the table's protocol or metadata changed to something this cannot write.
            TransientError, TerminalError: from the store (nothing is committed then).
        """
        _check_required(table)
        adds = [self._write_file(day, part) for day, part in _partitions(table)]
        commit_id = uuid.uuid4().hex
        info = _commit_info(self._clock(), commit_id, len(adds), table.num_rows, metadata)
        body = "\n".join(json.dumps(a, separators=(",", ":")) for a in [info, *adds]).encode()
        return self._commit(body, commit_id)

    def _commit(self, body: bytes, commit_id: str) -> int:
        version, taken = self._next, 0
        while True:  # Delta's protocol, not an error retry: a taken version means try the next one
            if self._store.put_if_absent(log_path(version), body):
                self._next = version + 1
                return version
            theirs = self._store.get(log_path(version)) or b""
            if commit_id.encode() in theirs:  # our own PUT landed before a retry of it
                self._next = version + 1
                return version
            taken += 1
            self.conflicts += 1
            version = self._after_taken(version, theirs, taken)

    def _after_taken(self, version: int, theirs: bytes, taken: int) -> int:
        """The next version to try once `version` was found taken by `theirs`."""
        if b'"metaData"' in theirs or b'"protocol"' in theirs or taken % JUMP_AFTER == 0:
            self.state = self._refresh()
            if self.state.problem:
                raise TableChanged(self.state.problem)
            return max(version, self.state.version) + 1
        return version + 1

    def _write_file(self, day: str, part: pa.Table) -> dict[str, Any]:
        name = f"{PARTITION}={day}/part-00000-{uuid.uuid4()}-c000.snappy.parquet"
        sink = io.BytesIO()
        pq.write_table(part.drop_columns([PARTITION]), sink, compression="snappy")
        data = sink.getvalue()
        self._store.put(name, data)
        return {"add": {"path": name, "partitionValues": {PARTITION: day}, "size": len(data),
                        "modificationTime": int(self._clock() * 1000), "dataChange": True,
                        "stats": json.dumps(_stats(part), separators=(",", ":"))}}


def _check_required(table: pa.Table) -> None:
    """Delta's invariants: no nulls where the schema says a column is required."""
    bad = [f.name for f in table.schema if not f.nullable and table.column(f.name).null_count]
    if bad:
        raise ValueError(f"changelog rows without a value in required column(s) {bad}")


def _partitions(table: pa.Table) -> list[tuple[str, pa.Table]]:
    """The table split by partition value (one part, but for a batch across midnight)."""
    days = pc.unique(table.column(PARTITION)).to_pylist()
    if len(days) == 1:
        return [(str(days[0]), table)]
    return [(str(d), table.filter(pc.equal(table.column(PARTITION), d))) for d in sorted(days)]


def _stats(part: pa.Table) -> dict[str, Any]:
    mins, maxs = {}, {}
    for name in STATS_COLUMNS:
        low, high = pc.min_max(part.column(name).cast(pa.int64())).values()
        mins[name], maxs[name] = _iso_ms(low.as_py()), _iso_ms(high.as_py())
    return {"numRecords": part.num_rows, "minValues": mins, "maxValues": maxs,
            "nullCount": {name: part.column(name).null_count for name in STATS_COLUMNS}}


def _iso_ms(micros: int) -> str:
    """Delta statistics keep timestamps to the millisecond (truncated, as delta-rs and Spark do)."""
    ts = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=micros // 1000)
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _commit_info(now: float, commit_id: str, files: int, rows: int,
                 metadata: dict[str, str]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "timestamp": int(now * 1000), "operation": "WRITE",
        "operationParameters": {"mode": "Append", "partitionBy": json.dumps(CHANGELOG_PARTITION_BY)},
        "engineInfo": f"lakeinlet:{__version__}", "clientVersion": f"lakeinlet-{__version__}",
        "txnId": commit_id, "isBlindAppend": True,
        "operationMetrics": {"num_added_files": files, "num_removed_files": 0, "num_added_rows": rows}}
    return {"commitInfo": info | {META_PREFIX + k: v for k, v in metadata.items()}}
