"""Adapter: the Hudi target table (Copy-on-Write). Spark's Hudi writer writes and commits, a
one-pass batch checked before its instant completes (`one_pass`); hudi-rs reads the timeline
(checkpoint, history, schema) without the JVM."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import pyarrow as pa

from lakeinlet.aws import AwsSection
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
    WriteCheck,
)
from lakeinlet.incremental.ports import CatalogFormat, Compaction, Load, Removal
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.hudi import arrow_fallback, catalog, one_pass, timeline
from lakeinlet.incremental.targets.hudi.answers import no_table
from lakeinlet.incremental.targets.hudi.changes import as_hudi_changes, keyed_by, merge_options, with_victims
from lakeinlet.incremental.targets.hudi.lease import Lease, held
from lakeinlet.incremental.targets.hudi.replacing import REPLACING, rows_of, with_deletions
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.hudi.staged import Staged, StagesRows
from lakeinlet.incremental.targets.hudi.write_options import META_COLUMNS, write_options
from lakeinlet.incremental.targets.merging import changes
from lakeinlet.incremental.targets.schema import fallback_schema, spark_schema
from lakeinlet.spark import empty_frame
from lakeinlet.storage import TableLocation, hudi_rs_options


class HudiTarget:
    """The Hudi table at `uri`; created by its first commit.

    Every write option whose key starts with `lakeinlet.` lands in the commit's extraMetadata, in
    the same commit as the rows (Hudi's own `hoodie.datasource.write.commitmeta.key.prefix`
    mechanism, the way its streamer keeps its checkpoint). Hudi checks no checkpoint at commit time
    and, in its default single-writer mode, a second writer rolls back or overwrites the first
    one's files (rows lost silently), so a loader holds the table's writer `lease` while it loads.
    A writer killed mid-commit leaves an inflight instant that readers ignore and the next writer
    rolls back.
    """

    stamp: Mapping[str, str] = tc.NO_STAMP  # set per run (`filter_record.stamp`)

    stages_rows = StagesRows()
    catalog_format: CatalogFormat | None = catalog.HUDI_CATALOG

    def __init__(self, where: str | TableLocation, aws: AwsSection, app_id: str, partition_by: Sequence[str],
                 spark_scheme: str, section: HudiSection, spark: Callable[[], Any], lease: Lease,
                 merge: Merge | None = None) -> None:
        self.location = TableLocation.of(where, spark_scheme).resolved()
        self.uri, self.spark_uri = self.location.uri.rstrip("/"), self.location.spark
        self.app_id, self.partition_by, self.merge = app_id, list(partition_by), merge
        self.section = keyed_by(section, merge)
        self._spark, self.lease = spark, lease
        self._storage = hudi_rs_options(aws, self.uri)
        self._held = False

    def table(self) -> Any:
        """The table through hudi-rs, or None before its first commit."""
        from hudi import HudiTableBuilder

        try:
            return HudiTableBuilder.from_base_uri(self.uri).with_storage_options(self._storage).build()
        except Exception as exc:
            if no_table(exc):
                return None
            raise

    def schema(self) -> pa.Schema | None:
        t = self.table()
        if t is None or not self.commits(1):
            return None
        schema = arrow_fallback.table_schema(t)
        return pa.schema([f for f in schema if f.name not in META_COLUMNS])

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        """Completed commits of the active timeline, newest first (Hudi archives older ones)."""
        return timeline.commits(self.table(), limit)

    def checkpoint(self) -> Checkpoint:
        found = self.commits()
        return tc.checkpoint_from(found, self.app_id, found[0].version if found else -1)

    def writing(self, role: str = "a loader") -> AbstractContextManager[None]:
        """Hold the writer lease as `role` (named to a writer that waits for it) for a run (loads,
        resets, maintenance): one writer per table; inside a run that holds it (a --continuous
        loader's maintenance), nothing more."""
        return nullcontext() if self._held else self._holding(role)

    @contextmanager
    def _holding(self, role: str) -> Iterator[None]:
        with held(self.lease, self.section.lease_wait_seconds, role):
            self._held = True
            try:
                yield
            finally:
                self._held = False

    def stage(self, change: Load | Removal, start: Position, end: Position, batch_id: str) -> Staged:
        """What the commit will write: the batch's rows (with the table's earlier rows of a
        `replace` object marked deleted: one upsert), or a removal's rows to delete. A batch not
        read ahead of its write (`ReadBatch.verify`) is written and committed here, its checks
        and `publish`'s run before its instant completes (`_write_checked`); otherwise nothing is
        written until `publish`.

        Raises:
            CommitConflict, LeaseLost: as `publish`, for a batch written here (nothing committed).
        """
        if isinstance(change, Removal):
            return self._stage_removal(change, start, end, batch_id)
        if self.merge is not None:
            return self._stage_merge(change, start, end, batch_id)
        batch, outcomes = change.batch, list(change.outcomes)
        one = batch.verify is not None and batch.data is not None
        data = one_pass.rows(self._spark(), batch.data) if one else batch.data
        earlier = tc.replacing(outcomes, change.replace) if self.schema() is not None else []
        victims = self._victims(earlier) if earlier else None
        if victims is None:
            meta = tc.load_meta(self.app_id, batch_id, start, end, outcomes,
                                previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
            staged = Staged(outcomes, start, meta, data, batch.schema, self._operation())
        else:
            rows, counts = victims
            outcomes = tc.replaced_outcomes(outcomes, counts)
            meta = tc.load_meta(self.app_id, batch_id, start, end, outcomes,
                                previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
            staged = Staged(outcomes, start, meta, self._with_deletions(data, rows, batch_id, batch.data),
                            batch.schema, "upsert", REPLACING)
        if one and batch.verify is not None:
            self._write_checked(staged, batch.verify, batch.data, sum(batch.rows.values()))
        return staged

    def _stage_merge(self, change: Load, start: Position, end: Position, batch_id: str) -> Staged:
        """The batch's newest change per key as one upsert (deletes marked), with the deletes of
        a `replace` object's earlier rows; written by `publish`."""
        assert self.merge is not None
        outcomes, data = list(change.outcomes), None
        if change.batch.data is not None:
            found = changes(change.batch.data, self.merge)
            outcomes, data = found.outcomes(outcomes), as_hudi_changes(found.rows)
        earlier = tc.replacing(outcomes, change.replace) if self.schema() is not None else []
        if victims := (self._victims(earlier) if earlier else None):
            rows, counts = victims
            outcomes = tc.replaced_outcomes(outcomes, counts)
            data = with_victims(data, rows, self.merge, self.partition_by)
        meta = tc.load_meta(self.app_id, batch_id, start, end, outcomes,
                            previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
        meta["merge"] = self.merge.label
        return Staged(outcomes, start, meta, data, change.batch.schema, "upsert")

    def publish(self, staged: Staged) -> int:
        """Write and commit the staged rows with the checkpoint, in one Hudi commit (a one-pass
        batch's commit, made by `stage`, is returned as it is).

        Raises:
            CommitConflict: the checkpoint is no longer the staged `start`.
            LeaseLost: another loader took the lease over (this one stalled past it).
            TerminalError: Hudi's write of a one-pass batch failed its check (nothing committed).
        """
        if staged.rejected is not None:
            staged.discard()
            raise TerminalError(f"{self.uri}: {staged.rejected}; nothing of the batch was committed")
        if staged.version is not None:
            return staged.version
        self.lease.check()
        self._check_start(staged.start)
        return self._write(staged.data, staged.schema, staged.meta, staged.operation, staged.extra)

    def _check_start(self, start: Position) -> None:
        """Raises CommitConflict when the checkpoint is no longer `start`."""
        now = self.checkpoint().position
        if (now or Position(-1)) != start:
            raise CommitConflict(f"checkpoint of {self.uri} moved from {start} to {now}: "
                                 "another loader committed this batch")

    def _write_checked(self, staged: Staged, verify: WriteCheck, read: Any, rows: int) -> None:
        """Write `staged` in one pass and commit it, or leave it refused: inside Hudi's commit,
        once the rows are written and before the instant completes, the batch's own check
        (`verify`: rows read against the footers, every row with lineage, observed on `read`)
        and Hudi's (no write errors; a keyless insert wrote every row: `rows`), then `publish`'s
        (the lease, the checkpoint). A refused write is `rejected` (`discard` rolls its instant
        back); a lost lease or a moved checkpoint is raised, left to the lease's next holder."""
        spark = self._spark()
        promised = rows if staged.operation == "insert" else None

        def check(written: one_pass.Written) -> None:
            one_pass.observed(spark, read)  # what `verify` (and the loader's `batch.problem`) reads
            why = verify.problem() or written.problem(promised)
            if why is not None:
                staged.rejected = why
                raise one_pass.Rejected(why)
            self.lease.check()
            self._check_start(staged.start)

        options = self._options(staged.operation, staged.extra, staged.meta)
        try:
            one_pass.write(spark, staged.data, options, self.spark_uri, check)
        except one_pass.Rejected:
            staged.roll_back = lambda: one_pass.roll_back(spark, self.spark_uri, options["hoodie.table.name"],
                                                          options)
            return
        staged.version = self._committed(staged.meta)

    def _victims(self, objs: Sequence[PlannedObject]) -> tuple[Any, dict[tuple[str, str], int]] | None:
        """The table's rows of `objs` (with Hudi's meta columns) and their count per object; None
        when there are none."""
        rows, counts = rows_of(self._spark(), self.spark_uri, objs)
        return (rows, counts) if counts else None

    def _with_deletions(self, data: Any, victims: Any, batch_id: str, keys: Any = None) -> Any:
        """`replacing.with_deletions` for this table's key and partitions."""
        return with_deletions(data, victims, batch_id, keys, self.section.hudi_record_key, self.partition_by)

    def _stage_removal(self, change: Removal, start: Position, end: Position, batch_id: str) -> Staged:
        """Hudi's `delete` of the table's own rows for the objects (meta columns included: a
        keyless table deletes by its generated keys), with the checkpoint in the same commit."""
        victims, counts = rows_of(self._spark(), self.spark_uri, change.objs) if self.schema() is not None \
            else (None, {})
        outcomes = tc.removal_outcomes(change.objs, change.decided, counts)
        meta = tc.load_meta(self.app_id, batch_id, start, end, outcomes, REMOVE,
                            previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
        if not counts:  # nothing to delete: a commit that only moves the checkpoint
            return Staged(outcomes, start, meta, None, None, "insert")
        return Staged(outcomes, start, meta, victims, None, "delete")

    def commit_position(self, start: Position | None, to: Position, reason: str,
                        operation: str = RESET) -> int:
        """A commit without rows that moves the checkpoint (a reset, or a first run's start)."""
        self.lease.check()
        return self._write(None, None, tc.position_meta(
            self.app_id, start, to, reason, operation,
            previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp), "insert")

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        """Loader commits after `target_version` in the active timeline.

        Raises:
            TerminalError: the ledger is so far behind that Hudi has archived commits it misses.
        """
        found = self.commits()
        if timeline.archived_past(found, self.table(), target_version):
            raise TerminalError(f"{self.uri}: the ledger stops at commit {target_version}, before Hudi's "
                                f"active timeline (oldest {found[-1].version}); it cannot be repaired")
        return tc.batches_after(found, self.app_id, target_version)

    def _operation(self) -> str:
        return "upsert" if self.section.hudi_record_key else "insert"

    def _write(self, data: Any, schema: pa.Schema | None, meta: dict[str, str], operation: str,
               extra: dict[str, str] | None = None) -> int:
        spark = self._spark()
        if data is None:
            data = empty_frame(spark, spark_schema(self.schema() or schema or
                                                   fallback_schema(self.partition_by)))
        data.write.format("hudi").options(**self._options(operation, extra, meta)).mode("append") \
            .save(self.spark_uri)
        return self._committed(meta)

    def _options(self, operation: str, extra: dict[str, str] | None, meta: dict[str, str]) -> dict[str, str]:
        """A write's options: `options`, the operation's own, and `meta` for the commit's metadata."""
        return self.options(operation) | (extra or {}) | tc.prefixed(meta)

    def _committed(self, meta: dict[str, str]) -> int:
        """The version of the commit Hudi just made with `meta`.

        Raises:
            TerminalError: the newest commit does not hold `meta`.
        """
        head = self.commits(1)
        if not head or any(head[0].meta.get(k) != v for k, v in meta.items()):
            raise TerminalError(f"{self.uri}: Hudi returned, but its newest commit does not hold this "
                                "batch (is hoodie.allow.empty.commit false?)")
        return head[0].version

    def options(self, operation: str) -> dict[str, str]:
        """The write options: lakeinlet's defaults, partitioning, key, then --hudi-option."""
        options = write_options(self.uri, self.partition_by, self.section, operation)
        return options if self.merge is None else merge_options(self.merge) | options

    def rows(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The table's rows read by hudi-rs (no Spark; through Spark where hudi-rs cannot read
        them: `arrow_fallback`), without Hudi's `_hoodie_*` columns."""
        from hudi import HudiReadOptions

        table = self.table()
        if table is None:
            raise FileNotFoundError(f"{self.uri}: no hudi table there (yet)")
        if arrow_fallback.panics(table):
            return arrow_fallback.spark_rows(self._spark, self.spark_uri, columns)
        batches = table.read(HudiReadOptions(projection=list(columns)) if columns else None)
        rows = pa.Table.from_batches(batches) if batches else pa.schema(table.get_schema()).empty_table()
        if columns:
            rows = rows.select(list(columns))
        return rows.drop_columns([c for c in rows.column_names if c.startswith("_hoodie_")])

    def catalog_partitions(self) -> list[dict[str, str]]:
        """The table's partitions, for a catalog that lists them (`catalog.partitions`)."""
        return catalog.partitions(self.table())

    def release(self) -> None:
        """Nothing is staged between batches (the lease is released by `writing`'s exit)."""

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        """Cluster small base files under the writer lease (`maintain.compact`); `retention_hours`
        is left to Hudi's cleaner, which runs after every commit by the table's own policy."""
        from lakeinlet.incremental.targets.hudi.maintain import compact

        return compact(self, self._spark, target_file_bytes, dry_run)

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        """Nothing to do: the next Hudi writer rolls back a failed write and deletes its files."""
        return []

