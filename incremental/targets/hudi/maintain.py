"""Compaction of a Hudi target: small base files clustered (Hudi's `run_clustering` procedure)
under the table's writer lease, so a rewrite never races a loader's commit.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.targets.hudi.lease import LeaseHeld
from lakeinlet.incremental.targets.hudi.timeline import ARCHIVED_AFTER

if TYPE_CHECKING:
    from lakeinlet.incremental.targets.hudi.target import HudiTarget

SMALL_FRACTION = 0.75
"""A base file under this fraction of the target size is small (Iceberg's `rewrite_data_files`
default, so the formats agree on what `maintain` rewrites)."""
GROUP_BYTES = 2 << 30
"""Hudi's default input bytes per clustering group (one group is rewritten by one task)."""
KEEP_ACTIVE = ARCHIVED_AFTER // 2
"""Most Hudi instants (commits and replacecommits) after the loader's checkpoint commit before
maintenance stops adding replacecommits: Hudi archives all but its newest `ARCHIVED_AFTER`
commits and replacecommits, where hudi-rs no longer reads the checkpoint, and ledger repair needs
the loader's commits before the checkpoint too (half of them are kept for it)."""
RETENTION = ("retention not applied: Hudi's cleaner deletes replaced files after every commit, the "
             "loader's too, by the table's policy (--hudi-option hoodie.clean.policy, "
             "hoodie.cleaner.commits.retained or hoodie.cleaner.hours.retained)")


@dataclass(frozen=True)
class Layout:
    """The table's live base files (replaced ones left out): file id → (partition, bytes)."""

    files: dict[str, tuple[str, int]]

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files.values())


@dataclass(frozen=True)
class Plan:
    """The small files worth clustering: per partition, the sizes of its small files (partitions
    with fewer than two are left out: one file rewritten alone gains nothing)."""

    target_bytes: int
    small: dict[str, list[int]]

    @property
    def limit(self) -> int:
        return int(self.target_bytes * SMALL_FRACTION)

    @property
    def rewritten(self) -> int:
        return sum(len(sizes) for sizes in self.small.values())

    @property
    def groups(self) -> int:
        return sum(math.ceil(sum(sizes) / GROUP_BYTES) for sizes in self.small.values())

    @property
    def outputs(self) -> int:
        """The files the rewrite should write: about one per target size in each partition."""
        return sum(math.ceil(sum(sizes) / self.target_bytes) for sizes in self.small.values())


def layout(table: Any) -> Layout:
    """The live base files of a hudi-rs table (None: no table yet)."""
    if table is None:
        return Layout({})
    return Layout({s.file_id: (s.partition_path, int(s.base_file_size) + sum(s.log_file_sizes))
                   for s in table.get_file_slices()})


def plan(found: Layout, target_bytes: int) -> Plan:
    """The partitions with at least two base files under the small-file limit, and their sizes."""
    limit = int(target_bytes * SMALL_FRACTION)
    small: dict[str, list[int]] = defaultdict(list)
    for part, size in found.files.values():
        if size < limit:
            small[part].append(size)
    return Plan(target_bytes, {p: sizes for p, sizes in small.items() if len(sizes) > 1})


def options(base: Mapping[str, str], todo: Plan) -> dict[str, str]:
    """The clustering's write options: the loader's (metadata table off, bloom filter sizing,
    --hudi-option: the same table as the loader writes), then the plan's sizing. Options whose
    value holds a comma are left out (the procedure splits its `options` on commas); those are
    key and partition fields, which Hudi reads from the table's own properties."""
    kept = {k: v for k, v in base.items() if "," not in v and k != "hoodie.datasource.write.operation"}
    prefix = "hoodie.clustering.plan.strategy."
    return kept | {
        prefix + "small.file.limit": str(todo.limit),
        prefix + "target.file.max.bytes": str(todo.target_bytes),
        prefix + "max.bytes.per.group": str(max(GROUP_BYTES, 2 * todo.target_bytes)),
        prefix + "max.num.groups": str(max(1, todo.groups)),
        prefix + "single.group.clustering.enabled": "false",
    }


def compact(target: HudiTarget, spark: Callable[[], Any], target_bytes: int, dry_run: bool) -> Compaction:
    """Cluster the table's small base files into files of about `target_bytes`, under the writer
    lease (see `HudiTarget.compact`); a dry run only reads the table's files (no Spark).

    Raises:
        LeaseHeld: another writer held the writer lease for the whole wait.
    """
    if dry_run:
        return _estimate(layout(target.table()), target_bytes)
    try:
        with target.writing("maintain"):
            target.lease.check()
            before = layout(target.table())  # read under the lease: a loader may commit until then
            version, detail = _cluster(target, spark(), plan(before, target_bytes))
            after = layout(target.table())
    except LeaseHeld as exc:
        raise LeaseHeld(f"maintain gave up: {exc}. Hudi takes one writer at a time: run maintain "
                        "between loader runs, or from the --continuous loader itself") from exc
    rewritten = len(set(before.files) - set(after.files))
    return Compaction(len(before.files), before.bytes, len(after.files), after.bytes, rewritten,
                      version, f"{detail}; {RETENTION}")


def _estimate(before: Layout, target_bytes: int) -> Compaction:
    """A dry run's answer: the files clustering would rewrite, and about how many it would write."""
    todo = plan(before, target_bytes)
    files = len(before.files) - todo.rewritten + todo.outputs
    return Compaction(len(before.files), before.bytes, files, before.bytes, todo.rewritten,
                      detail=f"would cluster {todo.rewritten} small files (under {todo.limit} bytes) "
                      f"in {len(todo.small)} partitions; {RETENTION}")


def _cluster(target: HudiTarget, spark: Any, todo: Plan) -> tuple[int | None, str]:
    """Finish a clustering an interrupted maintain left pending (it blocks upserts into its files),
    then cluster `todo`; returns the newest replacecommit's instant and what was done."""
    opts = options(target.options("insert"), todo)
    done = _call(spark, target.spark_uri, opts, "execute")
    notes = [f"finished {len(done)} pending clustering plans"] if done else []
    crowded = _after_checkpoint(target)
    if todo.small and crowded >= KEEP_ACTIVE:
        notes.append(f"skipped: {crowded} Hudi commits since the loader's checkpoint commit; clustering "
                     "waits for the loader's next commit so Hudi never archives its checkpoint")
    elif todo.small:
        ran = _call(spark, target.spark_uri, opts, None)
        notes.append(f"clustered {todo.rewritten} small files in {len(todo.small)} partitions "
                     f"(instant {', '.join(ran) or 'none'})")
        done += ran
    else:
        notes.append("no partition holds two small files: nothing to cluster")
    return (max(int(i) for i in done) if done else None), "; ".join(notes)


def _call(spark: Any, path: str, opts: Mapping[str, str], op: str | None) -> list[str]:
    """`CALL run_clustering` on the table at `path`; the completed instants it returns."""
    joined = ",".join(f"{k}={v}" for k, v in opts.items())
    args = [f"path => {_literal(path)}", f"options => {_literal(joined)}"]
    if op:
        args.append(f"op => {_literal(op)}")
    rows = spark.sql(f"CALL run_clustering({', '.join(args)})").collect()
    return [str(r["timestamp"]) for r in rows if r["state"] == "COMPLETED"]


def _after_checkpoint(target: HudiTarget) -> int:
    """Hudi instants (commits and replacecommits) newer than the loader's checkpoint commit."""
    commits = target.commits()
    mine = next((c.version for c in commits if c.is_ours(target.app_id) and c.position is not None), None)
    if mine is None:
        return 0
    table = target.table()
    replaced = table.get_timeline().get_completed_replacecommits() if table is not None else []
    return sum(c.version > mine for c in commits) + sum(int(i.timestamp) > mine for i in replaced)


def _literal(text: str) -> str:
    """A Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
