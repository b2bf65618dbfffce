"""Adapter: the ingest ledger, a Delta table with one row per planned object (delta-rs append)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable, write_deltalake
from deltalake.transaction import CommitProperties, Transaction

from lakeinlet.aws import AwsSection
from lakeinlet.delta_io import LatestTable, record_version
from lakeinlet.incremental.model import FINAL, LOADED, REMOVED, Outcome, PlannedObject
from lakeinlet.storage import TableLocation

if TYPE_CHECKING:
    from lakeinlet.incremental.cleanup import CleanupRecord

_TS = pa.timestamp("us", tz="UTC")
LEDGER_SCHEMA = pa.schema([
    ("bucket", pa.string()), ("key", pa.string()), ("identity", pa.string()), ("etag", pa.string()),
    ("version_id", pa.string()), ("event_id", pa.string()), ("event_time", _TS),
    ("changelog_version", pa.int64()), ("status", pa.string()), ("reason", pa.string()),
    ("rows", pa.int64()), ("bad_records", pa.int64()), ("bytes", pa.int64()),
    ("target_version", pa.int64()), ("batch_id", pa.string()), ("loaded_at", _TS),
])


class DeltaLedger:
    """The ledger at `uri`; created on the first append.

    Each append carries `txn(ledger app id, target version)`, so the ledger knows which target
    commit it reflects; a crash between the target commit and the ledger append is repaired from
    the target's commit metadata (the loader's `repair`), and a repair that races another one is
    harmless."""

    def __init__(self, where: str | TableLocation, aws: AwsSection, app_id: str) -> None:
        self.location = TableLocation.of(where)
        self.uri = self.location.uri
        self.app_id = app_id + ":ledger"
        self._options = self.location.options(aws)
        self._latest = LatestTable(self.uri, self._options)
        self._standing_read: tuple[int, frozenset[str], list[dict[str, Any]]] = (-1, frozenset(), [])

    def _table(self) -> DeltaTable | None:
        return self._latest.get()

    def read(self, columns: list[str] | None = None) -> pa.Table:
        dt = self._table()
        if dt is None:
            return LEDGER_SCHEMA.empty_table() if columns is None else \
                pa.schema([LEDGER_SCHEMA.field(c) for c in columns]).empty_table()
        return dt.to_pyarrow_dataset().to_table(columns=columns)

    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]:
        """The refs among `objs` that the ledger holds in a final status, unless a later
        removal deleted that object's rows (then the same version loads again)."""
        refs = {(r["bucket"], r["key"], r["identity"]) for r in self._standing(objs)}
        return {o.ref for o in objs if o.ref in refs}

    def identical(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str, str], str]:
        """The refs among `objs` that are another version of an object whose newest loaded
        version has the same ETag (the same bytes uploaded again: its rows are the table's), each
        with that loaded version's identity. Only the newest: under --on-overwrite replace an
        older version's rows are gone, and its bytes uploaded again are new to the table."""
        newest: dict[tuple[str, str], dict[str, Any]] = {}
        for r in self._standing(objs):
            key = (r["bucket"], r["key"])
            if r["status"] == LOADED and r["target_version"] >= newest.get(key, {}).get("target_version", -1):
                newest[key] = r
        out: dict[tuple[str, str, str], str] = {}
        for o in objs:
            loaded = newest.get((o.bucket, o.key))
            if (loaded is not None and _unquoted(o.etag) and _unquoted(loaded["etag"]) == _unquoted(o.etag)
                    and loaded["identity"] != o.identity):
                out[o.ref] = loaded["identity"]
        return out

    def _standing(self, objs: Sequence[PlannedObject]) -> list[dict[str, Any]]:
        """The ledger's final-status rows of the keys of `objs` whose rows no later removal deleted."""
        dt = self._table()
        if dt is None or not objs:
            return []
        wanted_keys = {o.key for o in objs}
        version, held, rows = self._standing_read
        if version == dt.version() and wanted_keys <= held:  # planning asks `known`, then `identical`
            return [r for r in rows if r["key"] in wanted_keys]  # of the same keys: scan once
        rows = self._scan(dt, wanted_keys)
        self._standing_read = (dt.version(), frozenset(wanted_keys), rows)
        return rows

    def _scan(self, dt: DeltaTable, wanted_keys: set[str]) -> list[dict[str, Any]]:
        keys = pa.array(sorted(wanted_keys))
        statuses = pa.array(sorted(FINAL | {REMOVED}))
        wanted = pc.field("key").isin(keys) & pc.field("status").isin(statuses)
        cols = ["bucket", "key", "identity", "etag", "status", "target_version"]
        found = dt.to_pyarrow_dataset().to_table(columns=cols, filter=wanted).to_pylist()
        removed: dict[tuple[str, str], int] = {}
        for r in (r for r in found if r["status"] == REMOVED):
            key = (r["bucket"], r["key"])
            removed[key] = max(r["target_version"], removed.get(key, -1))
        return [r for r in found if r["status"] != REMOVED
                and r["target_version"] > removed.get((r["bucket"], r["key"]), -1)]

    def loaded_times(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], datetime]:
        """The (bucket, key)s among `objs` of which some version was loaded and its rows not
        removed since (a new version has earlier rows to replace; a removal older than the
        loaded version removes nothing), each with the newest loaded version's event time."""
        dt = self._table()
        if dt is None or not objs:
            return {}
        keys = pa.array(sorted({o.key for o in objs}))
        wanted = pc.field("key").isin(keys) & pc.field("status").isin(pa.array([LOADED, REMOVED]))
        found = dt.to_pyarrow_dataset().to_table(
            columns=["bucket", "key", "status", "target_version", "event_time"], filter=wanted).to_pylist()
        newest: dict[tuple[str, str], tuple[int, bool, datetime]] = {}
        for r in found:  # the newest status per key; a removal after a load wins at equal versions
            mark = (r["target_version"], r["status"] == REMOVED, r["event_time"])
            key = (r["bucket"], r["key"])
            newest[key] = max(mark, newest.get(key, mark))
        wanted_keys = {(o.bucket, o.key) for o in objs}
        return {k: at for k, (_, removed, at) in newest.items() if k in wanted_keys and not removed}

    def rows_after_version(self, target_version: int) -> list[dict[str, Any]]:
        """The `loaded` and `removed` rows of target versions after `target_version` (what source
        cleanup settles; the files of earlier versions are skipped by their statistics)."""
        dt = self._table()
        if dt is None:
            return []
        wanted = (pc.field("target_version") > target_version) & \
            pc.field("status").isin(pa.array([LOADED, REMOVED]))
        cols = ["bucket", "key", "identity", "etag", "version_id", "status", "bad_records",
                "target_version", "loaded_at"]
        return dt.to_pyarrow_dataset().to_table(columns=cols, filter=wanted).to_pylist()

    def forget(self, refs: set[tuple[str, str, str]], status: str) -> None:
        """Delete the rows of `refs` in `status` (one commit; the Delta history keeps them, and the
        ledger's target version is unchanged)."""
        dt = self._table()
        if dt is None or not refs:
            return
        which = " OR ".join(f"(bucket = {_sql(b)} AND key = {_sql(k)} AND identity = {_sql(i)})"
                            for b, k, i in sorted(refs))
        dt.delete(f"status = {_sql(status)} AND ({which})",
                  commit_properties=CommitProperties(custom_metadata={"lakeinlet.operation": "forget"}))

    def last_target_version(self) -> int:
        dt = self._table()
        version = None if dt is None else dt.transaction_version(self.app_id)
        return -1 if version is None else int(version)

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None:
        """Append one row per outcome, tagged with the target version (idempotent per version)."""
        props = CommitProperties(app_transactions=[Transaction(self.app_id, target_version)],
                                 custom_metadata={"lakeinlet.batch": batch_id})

        def write() -> None:
            dt = self._latest.current()  # just brought up to date: writing through it spares
            write_deltalake(dt if dt is not None else self.uri,  # opening the ledger again
                            _rows(outcomes, target_version, batch_id), mode="append",
                            storage_options=None if dt is not None else self._options,
                            commit_properties=props)

        record_version(write, self.last_target_version, target_version)


def _sql(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _rows(outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> pa.Table:
    now = datetime.now(UTC)
    rows = [{"bucket": o.obj.bucket, "key": o.obj.key, "identity": o.obj.identity, "etag": o.obj.etag,
             "version_id": o.obj.version_id, "event_id": o.obj.event_id, "event_time": o.obj.event_time,
             "changelog_version": o.obj.commit_version, "status": o.status, "reason": o.reason,
             "rows": o.rows, "bad_records": o.bad_records, "bytes": o.obj.size,
             "target_version": target_version, "batch_id": batch_id, "loaded_at": now}
            for o in outcomes]
    return pa.Table.from_pylist(rows, schema=LEDGER_SCHEMA)


CLEANUP_SCHEMA = pa.schema([
    ("bucket", pa.string()), ("key", pa.string()), ("identity", pa.string()), ("etag", pa.string()),
    ("version_id", pa.string()), ("target_version", pa.int64()), ("action", pa.string()),
    ("status", pa.string()), ("reason", pa.string()), ("destination", pa.string()),
    ("pass_id", pa.string()), ("cleaned_at", _TS),
])


class DeltaCleanupLog:
    """Source cleanup's record, a Delta table beside the ledger (`<ledger>_cleanup`): one row per
    loaded object version archived, deleted or skipped for good (`target_version`: the ledger's,
    of its load). Each append's `txn` version is the floor: the ledger target version through
    which every loaded version is settled, so a pass reads only the ledger rows after it. The
    ledger itself is never written: its `known`, `loaded_times` and version stay the loader's."""

    def __init__(self, where: str | TableLocation, aws: AwsSection, app_id: str) -> None:
        self.location = TableLocation.of(where)
        self.uri = self.location.uri
        self.app_id = app_id + ":cleanup"
        self._options = self.location.options(aws)
        self._latest = LatestTable(self.uri, self._options)

    def floor(self) -> int:
        dt = self._latest.get()
        version = None if dt is None else dt.transaction_version(self.app_id)
        return -1 if version is None else int(version)

    def read(self) -> pa.Table:
        dt = self._latest.get()
        return CLEANUP_SCHEMA.empty_table() if dt is None else dt.to_pyarrow_dataset().to_table()

    def settled(self, after_version: int) -> set[tuple[str, str, str]]:
        """The (bucket, key, identity) of versions loaded after `after_version` that are recorded."""
        dt = self._latest.get()
        if dt is None:
            return set()
        found = dt.to_pyarrow_dataset().to_table(columns=["bucket", "key", "identity"],
                                                 filter=pc.field("target_version") > after_version)
        return {(r["bucket"], r["key"], r["identity"]) for r in found.to_pylist()}

    def append(self, records: Sequence[CleanupRecord], floor: int, pass_id: str) -> None:
        """One commit of `records` that moves the floor to `floor` (none when neither changes)."""
        if not records and floor <= self.floor():
            return
        props = CommitProperties(app_transactions=[Transaction(self.app_id, max(floor, self.floor()))],
                                 custom_metadata={"lakeinlet.cleanup_pass": pass_id})
        dt = self._latest.current()
        write_deltalake(dt if dt is not None else self.uri, _cleanup_rows(records, pass_id), mode="append",
                        storage_options=None if dt is not None else self._options, commit_properties=props)


def _cleanup_rows(records: Sequence[CleanupRecord], pass_id: str) -> pa.Table:
    now = datetime.now(UTC)
    rows = [{"bucket": r.obj.bucket, "key": r.obj.key, "identity": r.obj.identity, "etag": r.obj.etag,
             "version_id": r.obj.version_id, "target_version": r.obj.target_version, "action": r.action,
             "status": r.status, "reason": r.reason, "destination": r.destination, "pass_id": pass_id,
             "cleaned_at": now} for r in records]
    return pa.Table.from_pylist(rows, schema=CLEANUP_SCHEMA)


def _unquoted(etag: str | None) -> str:
    return (etag or "").strip('"')
