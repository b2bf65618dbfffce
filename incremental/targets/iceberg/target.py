"""Adapter: the Iceberg target table. Spark writes to a staging branch that `fast_forward`
publishes; pyiceberg reads the metadata (checkpoint, history, schema) without the JVM.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.model import (
    REMOVE,
    RESET,
    Checkpoint,
    Outcome,
    Position,
    TargetCommit,
)
from lakeinlet.incremental.ports import CatalogFormat, Compaction, Load, Removal
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.iceberg import branches
from lakeinlet.incremental.targets.iceberg.answers import concurrency
from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog, check_catalog_placement
from lakeinlet.incremental.targets.iceberg.creation import (
    ACCEPT_ANY_SCHEMA,
    create,
    foreign_or_none,
    namespace,
)
from lakeinlet.incremental.targets.iceberg.engine import commit_properties, orphan_files
from lakeinlet.incremental.targets.iceberg.history import main_commits
from lakeinlet.incremental.targets.iceberg.outcome_files import OutcomeFiles
from lakeinlet.incremental.targets.merging import DELETE, Changes, changes, merge_sql, quoted
from lakeinlet.incremental.targets.schema import fallback_schema
from lakeinlet.incremental.targets.sizing import DEFAULT_FILE_BYTES, sized, source_bytes
from lakeinlet.logs import event

log = logging.getLogger(__name__)


@dataclass
class Staged:
    """A batch appended (after its deletes) to this process's staging branch; main untouched
    until `publish` fast-forwards it. Nothing to discard: the next stage re-creates the branch."""

    outcomes: list[Outcome]
    meta: dict[str, str]

    def discard(self) -> None:
        """The branch is re-created at the checkpoint's snapshot by the next stage."""


class IcebergTarget:
    """The Iceberg table at `catalog.location`; created on the first commit, with an empty first
    snapshot so that there is always one to branch from.

    Exactly once: a plain Spark append re-applies itself on top of a concurrent commit, so every
    commit goes through this process's staging branch, created at the snapshot the checkpoint was
    read from. The batch (rows, or none) is appended to it with lakeinlet's metadata as snapshot
    summary properties, and `fast_forward` publishes it to `main` only if `main` is still that
    snapshot; otherwise the loader re-plans (`CommitConflict`). Outcomes go to a sidecar file
    (summaries stay in every metadata.json), written before the commit. A location that holds
    Iceberg metadata the catalog does not know is never created over (that would fork the table).
    `sleep`: the pauses before looking again at a table or namespace another creator may be making.
    """

    stamp: Mapping[str, str] = tc.NO_STAMP  # set per run (`filter_record.stamp`)

    stages_rows = True
    catalog_format: CatalogFormat | None = None  # an Iceberg table lives in its own catalog

    def __init__(self, catalog: IcebergCatalog, app_id: str, partition_by: Sequence[str],
                 spark: Callable[[], Any], outcomes: OutcomeFiles,
                 sleep: Callable[[float], None] = time.sleep, file_bytes: int = DEFAULT_FILE_BYTES,
                 merge: Merge | None = None) -> None:
        self.catalog, self.app_id, self.partition_by = catalog, app_id, list(partition_by)
        self.merge = merge
        # a merge's MERGE INTO reads rows the reader has checked (no checks riding on the write)
        self.stages_rows = merge is None
        self._accepts_any: bool | None = None  # the table's accept-any-schema, once looked up
        self.file_bytes = file_bytes
        self.uri = catalog.location
        self._spark, self.outcomes, self._sleep = spark, outcomes, sleep
        self.branch = f"lakeinlet_{uuid.uuid4().hex[:12]}"  # one per process: never shared
        self._placed = False  # the catalog's placement checked against Spark's master

    def table(self) -> Any:
        return self.catalog.load()

    def schema(self) -> pa.Schema | None:
        t = self.table()
        return None if t is None else _plain(t.schema().as_arrow())

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        """main's snapshots, newest first (the branch history readers see)."""
        return main_commits(self.table(), limit)

    def checkpoint(self) -> Checkpoint:
        found = self.commits()
        return tc.checkpoint_from(found, self.app_id, found[0].version if found else -1)

    def stage(self, change: Load | Removal, start: Position, end: Position, batch_id: str) -> Staged:
        """Append the batch (rows, or none) to the staging branch at main's snapshot, after
        deleting the rows of a removal's objects, or of a load's `replace` objects' earlier
        versions: one fast-forward publishes both.

        Raises:
            CommitConflict: main's checkpoint is no longer `start`.
        """
        found: dict[tuple[str, str], int] = {}
        merging: Changes | None = None
        if isinstance(change, Removal):
            base = self._base(None, start)
            where = tc.keys_sql(change.objs)
            found = self._counts(base, where)
            outcomes = tc.removal_outcomes(change.objs, change.decided, found)
            meta, data = tc.load_meta(self.app_id, batch_id, start, end, None, REMOVE, covers=outcomes,
                                      previous=tc.newest_watermark(self.commits, self.app_id),
                                      stamp=self.stamp), None
        else:
            base = self._base(change.batch.schema, start)
            outcomes, where, data = list(change.outcomes), None, change.batch.data
            if data is not None and self.merge is not None:
                merging = changes(data, self.merge)
                outcomes, data = merging.outcomes(outcomes), None
            elif data is not None:
                data = sized(data, source_bytes(outcomes), self.file_bytes, self.partition_by)
            if earlier := tc.replacing(outcomes, change.replace):
                found = self._counts(base, tc.keys_sql(earlier))
                outcomes, where = tc.replaced_outcomes(outcomes, found), tc.keys_sql(earlier)
            meta = tc.load_meta(self.app_id, batch_id, start, end, None, covers=outcomes,
                                previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
            if merging is not None and self.merge is not None:
                meta["merge"] = self.merge.label
        self.outcomes.put(batch_id, outcomes)
        self._append_to_branch(base, data, meta, where if found else None, merging)
        return Staged(list(outcomes), meta)

    def publish(self, staged: Staged) -> int:
        """Fast-forward main to the staging branch.

        Raises:
            CommitConflict: another loader moved main since the branch was made.
        """
        return self._fast_forward(staged.meta)

    def _counts(self, base: int, where: str) -> dict[tuple[str, str], int]:
        """Rows per (bucket, key) matching `where` at snapshot `base`."""
        with concurrency(self.uri):
            branch = self._branch(base)
        counts = branch.where(where).groupBy("_source_bucket", "_source_key").count().collect()
        return {(r[0], r[1]): int(r[2]) for r in counts}

    def _branch(self, base: int) -> Any:
        """The staging branch, (re)created at snapshot `base`, as a DataFrame."""
        spark, name = self.session(), self.catalog.spark_name
        spark.sql(f"ALTER TABLE {name} CREATE OR REPLACE BRANCH {self.branch} AS OF VERSION {base}")
        return spark.table(f"{name}.branch_{self.branch}")

    def commit_position(self, start: Position | None, to: Position, reason: str,
                        operation: str = RESET) -> int:
        """A snapshot without rows that moves the checkpoint (a reset, or a first run's start)."""
        meta = tc.position_meta(self.app_id, start, to, reason, operation,
                                previous=tc.newest_watermark(self.commits, self.app_id), stamp=self.stamp)
        self._append_to_branch(self._base(None, None), None, meta)
        return self._fast_forward(meta)

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        newer = [c for c in self.commits() if c.version > target_version]
        return tc.batches_after(newer, self.app_id, target_version,
                                lambda c: self.outcomes.get(c.meta.get("batch", "")))

    def _base(self, schema: pa.Schema | None, start: Position | None) -> int:
        """Create the table if needed; main's snapshot id, checked against `start`."""
        t = self.table()
        if t is None:
            t = self._foreign_or_none()
        if t is None:
            self._create(schema if schema is not None else fallback_schema(self.partition_by))
            t = self.table()
        now = tc.checkpoint_from(main_commits(t), self.app_id, -1).position
        if start is not None and (now or Position(-1)) != start:
            raise CommitConflict(f"checkpoint of {self.uri} moved from {start} to {now}: "
                                 "another loader committed this batch")
        return int(t.current_snapshot().snapshot_id)

    def _foreign_or_none(self) -> Any:
        """None, or the table a creator on this catalog registered meanwhile (`creation.py`)."""
        return foreign_or_none(self.catalog, self.table, self._sleep)

    def _create(self, schema: pa.Schema) -> None:
        """Its namespace if missing, then the table with its first, empty snapshot (`creation.py`)."""
        spark = self.session()
        self._namespace(spark)
        create(spark, self.catalog, _spark_schema(schema), self.partition_by)

    def _namespace(self, spark: Any) -> None:
        namespace(spark, self.catalog, self._sleep)

    def _append_to_branch(self, base: int, data: Any, meta: dict[str, str],
                          delete_where: str | None = None, merging: Changes | None = None) -> None:
        """Branch at `base`, [delete], [merge], append (rows or none) with `meta`; main untouched."""
        spark, name = self.session(), self.catalog.spark_name
        with concurrency(self.uri):
            if merging is not None or data is not None:
                self._schema_mode(spark, merging is None)
            empty = self._branch(base).limit(0)
            if delete_where:
                with commit_properties(spark, {"lakeinlet.operation": "remove-rows-staged"}):
                    spark.sql(f"DELETE FROM {name}.branch_{self.branch} WHERE {delete_where}")
            if merging is not None:
                empty = self._merge_into_branch(spark, merging.rows)
            df = data if data is not None else empty
            w = df.writeTo(f"{name}.branch_{self.branch}").option("mergeSchema", "true") \
                .option("check-ordering", "false")
            for key, value in tc.prefixed(meta).items():
                w = w.option(f"snapshot-property.{key}", value)
            w.append()

    def _schema_mode(self, spark: Any, appending: bool) -> None:
        """Appends add columns by merging the schema on write, which needs the table to accept any
        schema; Spark does not resolve a MERGE into such a table, so a merge adds them by DDL and
        takes the property off (and an append puts it back). Looked up once per process: a run
        either merges or appends."""
        if self._accepts_any == appending:
            return
        accepts = self.table().properties.get(ACCEPT_ANY_SCHEMA, "false").lower() == "true"
        self._accepts_any = appending
        if accepts != appending:
            name = self.catalog.spark_name
            spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('{ACCEPT_ANY_SCHEMA}' = 'true')" if appending
                      else f"ALTER TABLE {name} UNSET TBLPROPERTIES ('{ACCEPT_ANY_SCHEMA}')")

    def _merge_into_branch(self, spark: Any, rows: Any) -> Any:
        """MERGE the batch's changes (one per key) into the staging branch, after adding the
        columns they bring; returns the branch's (empty) rows with its new schema."""
        assert self.merge is not None
        name = self.catalog.spark_name
        target = f"{name}.branch_{self.branch}"
        plain = rows.drop(DELETE)
        have = set(spark.table(name).columns)
        if new := [f for f in plain.schema.fields if f.name not in have]:
            spark.sql(f"ALTER TABLE {name} ADD COLUMNS ("
                      + ", ".join(f"{quoted(f.name)} {f.dataType.simpleString()}" for f in new) + ")")
        branch = spark.table(target)  # after the DDL: the columns it added
        columns = [c for c in branch.columns if c in plain.columns]
        view = f"lakeinlet_changes_{uuid.uuid4().hex[:12]}"
        rows.createOrReplaceTempView(view)
        try:
            with commit_properties(spark, {"lakeinlet.operation": "merge-staged"}):
                spark.sql(merge_sql(target, view, self.merge, columns))
        finally:
            spark.catalog.dropTempView(view)
        return branch.limit(0)

    def _fast_forward(self, meta: dict[str, str]) -> int:
        name = self.catalog.spark_name  # qualified: a namespace may share the catalog's name
        with concurrency(self.uri):
            self.session().sql(f"CALL {self.catalog.name}.system.fast_forward('{name}', 'main', "
                               f"'{self.branch}')").collect()
        # Not just the head: a rewrite (`maintain`) or another loader may already sit on top of it.
        ours = next((c for c in self.commits() if all(c.meta.get(k) == v for k, v in meta.items())), None)
        if ours is None:
            raise TerminalError(f"{self.uri}: fast-forward returned but main does not hold this commit")
        return ours.version

    def rows(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The table's rows read by pyiceberg (no Spark)."""
        t = self.table()
        if t is None:
            raise FileNotFoundError(f"{self.uri}: no iceberg table there (yet)")
        return t.scan(selected_fields=tuple(columns or ("*",))).to_arrow()

    def session(self) -> Any:
        """The SparkSession, with this table's catalog settings (set before the catalog's first use)."""
        spark = self._spark()
        if not self._placed:  # the master is known for sure only once the session exists
            check_catalog_placement(self.catalog, spark.sparkContext.master)
            self._placed = True
        for key, value in self.catalog.spark_conf().items():
            if spark.conf.get(key, None) != value:
                spark.conf.set(key, value)
        return spark

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        """Files under the table no snapshot references (a killed writer's), older than the
        retention (Iceberg's orphan-file action), and branches dead loaders left behind: those
        whose last commit is older than the retention (`branches`)."""
        spark = self.session()
        t = self.table()
        if t is None:
            return []
        now_ms = datetime.now(UTC).timestamp() * 1000
        ages = branches.branch_ages(t.metadata, self.branch, now_ms)
        old = branches.stale(ages, retention_hours)
        for name in set(ages) - set(old):
            event(log, "branch kept", level=logging.INFO, branch=branches.describe(name, ages[name]),
                  reason=f"younger than --retention-hours {retention_hours:g}: a live loader may publish it")
        older = int(now_ms - retention_hours * 3_600_000)
        files = orphan_files(spark, self.catalog.spark_name, older, dry_run)
        if not dry_run:
            for ref in old:
                spark.sql(f"ALTER TABLE {self.catalog.spark_name} DROP BRANCH IF EXISTS {ref}")
        return [*files, *(branches.describe(r, ages[r]) for r in old)]

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        """Iceberg's `rewrite_data_files`, then snapshot expiry that keeps what the checkpoint and
        a ledger repair read (`maintain.py`)."""
        from lakeinlet.incremental.targets.iceberg import maintain

        return maintain.compact(self, target_file_bytes, retention_hours, dry_run, self._sleep)

    def catalog_partitions(self) -> list[dict[str, str]]:
        """None: an Iceberg table is registered by its own catalog (--iceberg-catalog)."""
        return []

    def release(self) -> None:
        """Drop this process's staging branch (what a crash leaves, `vacuum` drops)."""
        t = self.table()
        if t is not None and self.branch in t.metadata.refs:
            self.session().sql(f"ALTER TABLE {self.catalog.spark_name} DROP BRANCH IF EXISTS {self.branch}")


def _plain(schema: pa.Schema) -> pa.Schema:
    """pyiceberg's arrow schema with large strings/binaries as plain ones (what Spark maps)."""
    swap = {pa.large_string(): pa.string(), pa.large_binary(): pa.binary()}
    return pa.schema([f.with_type(swap.get(f.type, f.type)) for f in schema])


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(_plain(schema), prefer_timestamp_ntz=True)
