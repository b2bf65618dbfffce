"""Adapter: the Delta target table, committed with delta-rs from the driver.

One commit per batch holds the data files Spark wrote, the checkpoint (`txn` app id + the last
fully consumed changelog version) and, in its commit metadata, the finer position and every
planned object's outcome (so the ledger can always be rebuilt from the target's history).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError
from deltalake.schema import Field, Schema
from deltalake.transaction import AddAction, CommitProperties, RemoveAction, Transaction

from lakeinlet.aws import AwsSection, delta_uri, storage_options
from lakeinlet.delta_io import open_table
from lakeinlet.errors import CommitConflict
from lakeinlet.incremental.model import Checkpoint, Outcome, Position
from lakeinlet.incremental.ports import ReadResult

META = "lakeinlet."
LOAD, RESET = "load", "checkpoint-reset"
LINEAGE_SCHEMA = pa.schema([
    ("_source_bucket", pa.string()), ("_source_key", pa.string()), ("_source_etag", pa.string()),
    ("_source_event_time", pa.timestamp("us", tz="UTC")), ("_ingest_batch", pa.string())])
"""Columns every target row carries; also the schema of a table whose first batch had no rows."""


class DeltaTarget:
    """The target table at `uri`; created on the first commit with the first batch's schema."""

    def __init__(self, uri: str, aws: AwsSection, app_id: str, partition_by: Sequence[str] = ()) -> None:
        self.uri = delta_uri(uri)
        self.app_id = app_id
        self.partition_by = list(partition_by)
        self._options = storage_options(aws, self.uri)

    def table(self) -> DeltaTable | None:
        return open_table(self.uri, self._options)

    def schema(self) -> pa.Schema | None:
        dt = self.table()
        return None if dt is None else pa.schema(dt.schema().to_arrow())

    def history(self, limit: int | None = None) -> list[dict[str, Any]]:
        dt = self.table()
        return [] if dt is None else list(dt.history(limit))

    def checkpoint(self) -> Checkpoint:
        """The position in the newest commit that carries one (a load or a reset)."""
        dt = self.table()
        if dt is None:
            return Checkpoint(None, -1)
        version, txn = int(dt.version()), dt.transaction_version(self.app_id)
        if txn is None:
            return Checkpoint(None, version)
        for limit in (16, None):  # the newest commits nearly always hold it: read few first
            for h in dt.history(limit):
                if h.get(META + "app_id") == self.app_id and META + "position" in h:
                    when = datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC)
                    return Checkpoint(Position.from_json(h[META + "position"]), version, when)
        return Checkpoint(Position(int(txn)), version)

    def _ensure(self, schema: pa.Schema) -> DeltaTable:
        """Create the table, or add columns the batch brings (schema evolution)."""
        dt = self.table()
        if dt is None:
            try:
                return DeltaTable.create(self.uri, schema, mode="error",
                                         partition_by=self.partition_by or None,
                                         storage_options=self._options)
            except Exception:  # another loader created it first: use theirs
                dt = self.table()
                if dt is None:
                    raise
        current = pa.schema(dt.schema().to_arrow())
        added = [f for f in schema if f.name not in current.names]
        if added:
            dt.alter.add_columns([Field.from_arrow(f) for f in added])
            dt = self.table()
        assert dt is not None
        return dt

    def commit(self, result: ReadResult, start: Position, end: Position, batch_id: str,
               outcomes: Sequence[Outcome]) -> int:
        """Commit the batch's files and the checkpoint `end` in one transaction.

        Raises:
            CommitConflict: the checkpoint is no longer `start` (another loader committed this
                batch) or a concurrent commit touched the same app id.
        """
        dt = self._ensure(result.schema if result.schema is not None else self._fallback_schema())
        now = self.checkpoint()
        if (now.position or Position(-1)) != start and not (now.position is None and start == Position(-1)):
            raise CommitConflict(f"checkpoint of {self.uri} moved from {start} to {now.position}: "
                                 "another loader committed this batch")
        meta = {META + "operation": LOAD, META + "app_id": self.app_id, META + "batch": batch_id,
                META + "start": start.to_json(), META + "position": end.to_json(),
                META + "outcomes": json.dumps([o.to_list() for o in outcomes], default=str)}
        return self._commit(dt, [_add(f) for f in result.files], end, meta)

    def _commit(self, dt: DeltaTable, actions: list[AddAction | RemoveAction], end: Position,
                meta: dict[str, str]) -> int:
        props = CommitProperties(app_transactions=[Transaction(self.app_id, end.complete)],
                                 custom_metadata=meta)
        try:
            dt.create_write_transaction(actions, mode="append", schema=pa.schema(dt.schema().to_arrow()),
                                        partition_by=self.partition_by or None, commit_properties=props)
        except CommitFailedError as exc:
            raise CommitConflict(f"commit to {self.uri} lost to a concurrent writer: {exc}") from exc
        done = self.table()
        assert done is not None
        return int(done.version())

    def commit_reset(self, start: Position | None, to: Position, reason: str) -> int:
        """Record a checkpoint reset: a commit without files that moves `txn` and says why."""
        dt = self.table()
        if dt is None:
            raise CommitConflict(f"{self.uri}: no target table yet; nothing to reset")
        meta = {META + "operation": RESET, META + "app_id": self.app_id,
                META + "start": (start or Position(-1)).to_json(), META + "position": to.to_json(),
                META + "reason": reason}
        return self._commit(dt, [], to, meta)

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        dt, out = self.table(), []
        if dt is None:
            return []
        for h in dt.history(max(int(dt.version()) - target_version, 1)):
            if int(h["version"]) > target_version and h.get(META + "operation") == LOAD \
                    and h.get(META + "app_id") == self.app_id:
                outcomes = [Outcome.from_list(v) for v in json.loads(h[META + "outcomes"])]
                out.append((int(h["version"]), str(h[META + "batch"]), outcomes))
        return sorted(out, key=lambda item: item[0])

    def _fallback_schema(self) -> pa.Schema:
        return self.schema() or LINEAGE_SCHEMA


def _add(f: Any) -> AddAction:
    return AddAction(f.path, f.size, f.partition_values, f.modification_time, True, f.stats)


def to_delta_schema(schema: pa.Schema) -> Schema:
    return Schema.from_arrow(schema)
