"""Adapter: the Delta target table. Spark writes Parquet into the table folder; the driver commits
the files with delta-rs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError
from deltalake.schema import Field
from deltalake.transaction import AddAction, CommitProperties, RemoveAction, Transaction

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.log_store import LogStore, store_for
from lakeinlet.delta_io import LatestTable
from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.model import (
    REMOVE,
    RESET,
    Checkpoint,
    Outcome,
    PlannedObject,
    Position,
    TargetCommit,
)
from lakeinlet.incremental.ports import CatalogFormat, Compaction, Load, Removal
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.delta.catalog import DELTA_CATALOG
from lakeinlet.incremental.targets.delta.files import DataFile, add_action, data_files, vanished
from lakeinlet.incremental.targets.delta.history import checkpoint_in, commit_of
from lakeinlet.incremental.targets.delta.maintain import compact_table
from lakeinlet.incremental.targets.delta.merge import merged
from lakeinlet.incremental.targets.delta.protocol import list_features
from lakeinlet.incremental.targets.delta.removal import find_rows
from lakeinlet.incremental.targets.delta.vacuum import vacuum_table
from lakeinlet.incremental.targets.merging import Changes, changes
from lakeinlet.incremental.targets.schema import fallback_schema
from lakeinlet.incremental.targets.sizing import DEFAULT_FILE_BYTES, sized, source_bytes
from lakeinlet.storage import TableLocation


@dataclass
class Staged:
    """A batch's Parquet files written under `data/<batch id>/` (a removal's rewritten files and
    the RemoveActions of those they replace), committed by `publish`."""

    target: DeltaTarget
    outcomes: list[Outcome]
    files: list[DataFile]
    start: Position
    end: Position
    batch_id: str
    schema: pa.Schema | None = None
    replace: Sequence[PlannedObject] = ()
    removal: tuple[DeltaTable, list[AddAction | RemoveAction]] | None = None
    meta: dict[str, str] = field(default_factory=dict)
    changes: Changes | None = None
    """With --merge-key: the batch's changes, merged into the table's rows by `publish`."""

    def discard(self) -> None:
        self.target.discard(self.files)


class DeltaTarget:
    """The target table at `uri`; created on the first commit with the first batch's schema.

    One commit per batch holds the data files, the checkpoint (`txn` app id + the last fully
    consumed changelog version) and, in its commit metadata, the finer position, files and bytes,
    and every planned object's outcome (so the ledger can always be rebuilt from the target's
    history). A second loader fails cleanly: delta-rs rejects a commit whose app id moved
    concurrently, and the checkpoint is checked again just before committing.
    """

    stamp: Mapping[str, str] = tc.NO_STAMP  # set per run (`filter_record.stamp`)

    stages_rows = True
    catalog_format: CatalogFormat | None = DELTA_CATALOG

    def __init__(self, where: str | TableLocation, aws: AwsSection, app_id: str,
                 partition_by: Sequence[str] = (), spark_scheme: str = "s3a",
                 spark: Callable[[], Any] | None = None, file_bytes: int = DEFAULT_FILE_BYTES,
                 merge: Merge | None = None) -> None:
        self.location = TableLocation.of(where, spark_scheme)
        self.uri, self.spark_uri = self.location.uri, self.location.spark
        self.app_id = app_id
        self.partition_by = list(partition_by)
        self._options = self.location.options(aws)
        self._latest = LatestTable(self.uri, self._options)
        self.fs, self.root = self.location.filesystem(aws)
        self._aws = aws
        self._spark = spark
        self.file_bytes = file_bytes
        self._seen: Checkpoint | None = None
        self.merge = merge
        # a merge writes in `publish`, from rows the reader has checked (no checks riding on the write)
        self.stages_rows = merge is None

    def table(self) -> DeltaTable | None:
        return self._latest.get()

    @cached_property
    def store(self) -> LogStore:
        """The table's files for a commit written by hand (compaction's), made when first needed."""
        return store_for(self.uri, self._aws)

    def schema(self) -> pa.Schema | None:
        dt = self.table()
        return None if dt is None else pa.schema(dt.schema().to_arrow())

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        dt = self.table()
        return [] if dt is None else [commit_of(h) for h in dt.history(limit)]

    def checkpoint(self) -> Checkpoint:
        """The position in the newest commit that carries one (a load, a removal or a reset)."""
        return self._checkpoint(self.table())

    def _checkpoint(self, dt: DeltaTable | None) -> Checkpoint:
        """The checkpoint as of `dt`'s version; a version's checkpoint never changes, so the
        last one found is kept and reused while the table stays at that version."""
        if dt is None:
            return Checkpoint(None, -1)
        if self._seen is None or self._seen.target_version != int(dt.version()):
            self._seen = checkpoint_in(dt, self.app_id)
        return self._seen

    def stage(self, change: Load | Removal, start: Position, end: Position, batch_id: str) -> Staged:
        """A load: Spark writes its rows as Parquet. A removal: the files holding rows of its
        objects are rewritten without them (the checkpoint is checked first)."""
        if isinstance(change, Removal):
            return self._stage_removal(change, start, end, batch_id)
        data = change.batch.data
        if self.merge is not None and data is not None:
            found = changes(data, self.merge)
            return Staged(self, found.outcomes(change.outcomes), [], start, end, batch_id,
                          change.batch.schema, change.replace, changes=found)
        files = [] if data is None else self._write(data, batch_id, source_bytes(change.outcomes))
        return Staged(self, list(change.outcomes), files, start, end, batch_id, change.batch.schema,
                      change.replace)

    def publish(self, staged: Staged) -> int:
        """Commit the staged files and the checkpoint `end` in one transaction (with the rewrite
        of the files holding earlier rows of `replace`).

        Raises:
            CommitConflict: the checkpoint is no longer `start` (another loader committed this
                batch) or a concurrent commit touched the same app id.
        """
        if staged.removal is not None:
            dt, removed = staged.removal
            actions = [*removed, *(add_action(f) for f in staged.files)]
            return self._commit(dt, actions, staged.end, staged.meta)
        dt = self._ensure(staged.schema if staged.schema is not None else self._fallback_schema())
        self._check_start(staged.start, dt)
        self._check_files(staged.files)
        removes: list[AddAction | RemoveAction] = []
        files, outcomes = staged.files, staged.outcomes
        if staged.changes is not None:
            removes, files, outcomes = self._merge(dt, staged)
        elif earlier := tc.replacing(outcomes, staged.replace):
            counts, removes, kept = self._without(dt, earlier, f"{staged.batch_id}-kept")
            outcomes, files = tc.replaced_outcomes(outcomes, counts), [*files, *kept]
        staged.outcomes = list(outcomes)
        meta = tc.load_meta(self.app_id, staged.batch_id, staged.start, staged.end, outcomes,
                            previous=self._checkpoint(dt).watermark, stamp=self.stamp) | {
            "files": str(len(files)), "bytes": str(sum(f.size for f in files))}
        if staged.changes is not None and self.merge is not None:
            meta["merge"] = self.merge.label
        return self._commit(dt, [*removes, *(add_action(f) for f in files)], staged.end, meta)

    def _merge(self, dt: DeltaTable, staged: Staged) -> tuple[
            list[AddAction | RemoveAction], list[DataFile], list[Outcome]]:
        """The batch's changes merged into the files holding their keys (and, with a replace, the
        earlier rows of its objects): those files' RemoveActions and the rewritten files."""
        assert staged.changes is not None and self.merge is not None
        if self._spark is None:
            raise TerminalError("a merge needs Spark (the loader passes its session)")
        earlier = tc.replacing(staged.outcomes, staged.replace)
        done = merged(self._spark(), dt, self.spark_uri, self.uri, self.partition_by,
                      staged.changes.rows, self.merge, earlier)
        size = source_bytes(staged.outcomes) + done.removed_bytes
        staged.files = self._write(done.rows, f"{staged.batch_id}-merged", size)
        outcomes = tc.replaced_outcomes(staged.outcomes, done.replaced) if earlier else staged.outcomes
        return done.removes, staged.files, outcomes

    def _write(self, df: Any, batch_id: str, size: int) -> list[DataFile]:
        """Spark writes the rows (`size` bytes of source data: see `sized`) under `data/<batch id>/`:
        a folder per attempt, so a crashed attempt leaves orphans that no commit references (see
        `vacuum`)."""
        folder = f"data/{batch_id}"
        df = sized(df, size, self.file_bytes, self.partition_by)
        df.write.mode("append").partitionBy(*self.partition_by).parquet(f"{self.spark_uri}/{folder}")
        return data_files(self.fs, self.root, folder, self.partition_by)

    def discard(self, files: Sequence[DataFile]) -> None:
        """Delete a write no commit will reference (what is left, `vacuum` deletes later)."""
        for f in files:
            with suppress(OSError):
                self.fs.delete_file(f"{self.root}/{f.path}")

    def _check_files(self, files: Sequence[DataFile]) -> None:
        """The batch's files are all still there (a vacuum with a retention shorter than this
        batch took would have deleted them): a commit never references a missing file."""
        if gone := vanished(self.fs, self.root, files):
            raise TerminalError(f"{self.uri}: {len(gone)} files of this batch vanished before its "
                                f"commit (a vacuum with a retention shorter than the batch?): {gone[0]}")

    def _check_start(self, start: Position, dt: DeltaTable) -> None:
        """The checkpoint at `dt` (just brought up to date) is still `start`."""
        now = self._checkpoint(dt).position
        if (now or Position(-1)) != start:
            raise CommitConflict(f"checkpoint of {self.uri} moved from {start} to {now}: "
                                 "another loader committed this batch")

    def _ensure(self, schema: pa.Schema) -> DeltaTable:
        """Create the table, or add columns the batch brings (schema evolution)."""
        dt = self.table()
        if dt is None:
            try:
                dt = DeltaTable.create(self.uri, schema, mode="error", partition_by=self.partition_by or None,
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
        if list_features(dt):
            dt = self.table()
            assert dt is not None
        return dt

    def _commit(self, dt: DeltaTable, actions: list[AddAction | RemoveAction], end: Position,
                meta: dict[str, str]) -> int:
        props = CommitProperties(app_transactions=[Transaction(self.app_id, end.complete)],
                                 custom_metadata=tc.prefixed(meta))
        try:
            dt.create_write_transaction(actions, mode="append", schema=pa.schema(dt.schema().to_arrow()),
                                        partition_by=self.partition_by or None, commit_properties=props)
        except CommitFailedError as exc:
            raise CommitConflict(f"commit to {self.uri} lost to a concurrent writer: {exc}") from exc
        done = self.table()
        assert done is not None
        return int(done.version())

    def _stage_removal(self, change: Removal, start: Position, end: Position, batch_id: str) -> Staged:
        """Rewrite the files holding rows of the objects without them; `publish` commits the old
        files' RemoveActions, the new files' AddActions and the checkpoint in one transaction."""
        objs = change.objs
        dt = self._ensure(self._fallback_schema())
        self._check_start(start, dt)
        counts, removes, files = self._without(dt, objs, batch_id) if objs else ({}, [], [])
        outcomes = tc.removal_outcomes(objs, change.decided, counts)
        meta = tc.load_meta(self.app_id, batch_id, start, end, outcomes, REMOVE,
                            previous=self._checkpoint(dt).watermark, stamp=self.stamp) | {
            "files": str(len(files)), "bytes": str(sum(f.size for f in files))}
        return Staged(self, outcomes, files, start, end, batch_id, removal=(dt, removes), meta=meta)

    def _without(self, dt: DeltaTable, objs: Sequence[PlannedObject], batch_id: str) -> tuple[
            dict[tuple[str, str], int], list[AddAction | RemoveAction], list[DataFile]]:
        """Rows per object in the table, RemoveActions of the files holding them, and the files
        Spark rewrote without them (under `data/<batch id>/`)."""
        if self._spark is None:
            raise TerminalError("removing rows needs Spark (the loader passes its session)")
        found = find_rows(self._spark(), dt, self.spark_uri, self.uri, self.partition_by, objs)
        if found is None:
            return {}, [], []
        return found.counts, found.removes, self._write(found.keep, batch_id, found.removed_bytes)

    def commit_position(self, start: Position | None, to: Position, reason: str,
                        operation: str = RESET) -> int:
        """A commit without files that moves `txn` and says why (a reset, or a first run's start)."""
        dt = self._ensure(self._fallback_schema())
        return self._commit(dt, [], to, tc.position_meta(self.app_id, start, to, reason, operation,
                                                         previous=self._checkpoint(dt).watermark,
                                                         stamp=self.stamp))

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        dt = self.table()
        if dt is None:
            return []
        return tc.batches_after(self.commits(max(int(dt.version()) - target_version, 1)), self.app_id,
                                target_version)

    def _fallback_schema(self) -> pa.Schema:
        return self.schema() or fallback_schema(self.partition_by)

    def rows(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The table's rows read by delta-rs (its SQL engine; no Spark)."""
        from deltalake import QueryBuilder

        dt = self.table()
        if dt is None:
            raise FileNotFoundError(f"{self.uri}: no delta table there (yet)")
        cols = ", ".join(f'"{c}"' for c in columns) if columns else "*"
        return pa.table(QueryBuilder().register("t", dt).execute(f"SELECT {cols} FROM t").read_all())

    def catalog_partitions(self) -> list[dict[str, str]]:
        """None to list: engines take a Delta table's partitions from its log."""
        return []

    def release(self) -> None:
        """Nothing is held between batches: a staged batch is files no commit references."""

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        """Each partition's small files rewritten into files of about `target_file_bytes`, in a
        dataChange=false commit (see `maintain.compact_table`); the replaced files stay for time
        travel until `vacuum` (`retention_hours` is vacuum's: a compaction deletes nothing)."""
        return compact_table(self.table, self.fs, self.root, self.store, self.uri, self.app_id,
                             target_file_bytes, dry_run)

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        """Files the log does not reference (a crashed or losing batch's folder, removed files),
        older than the retention; deleted unless `dry_run`."""
        return vacuum_table(self.table(), retention_hours, dry_run)
