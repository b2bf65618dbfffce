"""Iceberg upkeep of a loader's table (`maintain`): small data files rewritten by Iceberg's
`rewrite_data_files`, then snapshots expired, never those the loader's checkpoint or a ledger
repair still reads."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyiceberg.table.snapshots import Operation

from lakeinlet.errors import CommitConflict
from lakeinlet.incremental.model import LOAD, REMOVE, TargetCommit
from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.targets.iceberg.answers import concurrency
from lakeinlet.retry import transient

if TYPE_CHECKING:
    from lakeinlet.incremental.targets.iceberg.target import IcebergTarget

MIN_RATIO, MAX_RATIO = 0.75, 1.8
"""Files smaller or larger than these fractions of the target size are rewritten: Iceberg's own
defaults, passed explicitly so that a dry run counts what the rewrite would take."""
ATTEMPTS = 3
"""Tries of a whole rewrite (or expiry) that lost to a concurrent commit after Iceberg's own commit
retries: a loader's removal rewrote a file this rewrite replaces. Nothing of a lost try is visible."""


@dataclass(frozen=True)
class Files:
    """main's live data files, and what a rewrite of them takes and would write."""

    count: int
    bytes: int
    taken: int
    written: int


@dataclass(frozen=True)
class Keep:
    """What snapshot expiry keeps of main: its newest `retain_last` snapshots, and any newer than
    `older_than` (Iceberg's `retain_last` and `older_than`)."""

    retain_last: int
    older_than: datetime


def compact(target: IcebergTarget, target_file_bytes: int, retention_hours: float, dry_run: bool,
            sleep: Callable[[float], None] = time.sleep) -> Compaction:
    """Rewrite main's small files into files of about `target_file_bytes` (one commit, operation
    `replace`: no row, checkpoint or loader commit changes), then expire snapshots older than the
    retention except those `keep_of` protects. A dry run commits nothing.

    Raises:
        CommitConflict: the rewrite lost to concurrent commits `ATTEMPTS` times.
    """
    t = target.table()
    if t is None:
        return Compaction(0, 0, 0, 0, 0, detail="no table yet")
    before, now = survey(t, target_file_bytes), datetime.now(UTC)
    if dry_run:
        keep = keep_of(target.commits(), target.app_id, retention_hours, now)
        return Compaction(before.count, before.bytes, before.count - before.taken + before.written,
                          before.bytes, before.taken,
                          detail=f"would expire {len(expirable(t, keep))} snapshots")
    snapshots = {s.snapshot_id for s in t.snapshots()}
    retry = transient(ATTEMPTS, sleep=sleep, on=CommitConflict)
    rewritten = retry(_rewrite, target, target_file_bytes) if before.taken else 0
    version = _replace_version(target.table(), snapshots) if rewritten else None
    keep = keep_of(target.commits(), target.app_id, retention_hours, now)  # the rewrite is on top now
    retry(_expire, target, keep)
    t = target.table()
    after, expired = survey(t, target_file_bytes), snapshots - {s.snapshot_id for s in t.snapshots()}
    return Compaction(before.count, before.bytes, after.count, after.bytes, rewritten, version,
                      f"{meanwhile(t, snapshots)}; expired {len(expired)} snapshots (kept main's newest "
                      f"{keep.retain_last}, down to the checkpoint's commit and the load before it)")


def meanwhile(t: Any, existing: set[int]) -> str:
    """What main's commits since `existing` did, from their summaries: the rewrite's files
    replaced and written, and the files loaders added beside it (the figures before → after
    count theirs too)."""
    rewrite, loads, added = (0, 0), 0, 0
    for snap in _ancestors(t, t.metadata.current_snapshot_id):
        if snap.snapshot_id in existing:
            break
        summary = snap.summary.additional_properties if snap.summary is not None else {}
        files = int(summary.get("deleted-data-files", 0)), int(summary.get("added-data-files", 0))
        if snap.summary is not None and snap.summary.operation == Operation.REPLACE:
            rewrite = (rewrite[0] + files[0], rewrite[1] + files[1])
        else:
            loads, added = loads + 1, added + files[1]
    return (f"the rewrite replaced {rewrite[0]} files with {rewrite[1]}; meanwhile {loads} loader "
            f"commits added {added} files")


def keep_of(commits: Sequence[TargetCommit], app_id: str, retention_hours: float, now: datetime) -> Keep:
    """What expiry must keep of main's `commits` (newest first, as `IcebergTarget.commits` walks
    them from parent to parent): every snapshot from the head down to the commit holding loader
    `app_id`'s checkpoint and down to the load or removal before it, or the checkpoint and a ledger
    repair find nothing past the first one missing.

    Why this keeps every loader commit the ledger has not recorded: a loader commit newer than
    the checkpoint's cannot exist on main, since each one carries the checkpoint it moves to. An
    older one is unrecorded only after its loader died between publishing and its ledger append,
    and then only until another loader appends: `Loader._append_ledger` repairs every earlier
    commit first, and each run starts with a repair. So at most the commit before the checkpoint's
    is unrecorded while the checkpoint's loader is still between its publish and its append; two
    loaders dying back to back in that gap, with none started since, is what this cannot tell
    (running the loader's `repair` before `maintain` records those).

    `older_than` is also capped at the oldest kept timestamp: commits that land between this
    reading and the expiry push the kept ones deeper than `retain_last`, and writers' clocks need
    not agree. Staging branches need nothing here: Iceberg never expires a branch's head and keeps
    `retain_last` of its ancestors, and a live loader branches from main's head, which is kept."""
    ours = [i for i, c in enumerate(commits) if c.is_ours(app_id) and c.position is not None]
    depth = 0
    if ours:
        before = next((i for i in ours[1:] if commits[i].operation in (LOAD, REMOVE)), ours[0])
        depth = before + 1
    older = now - timedelta(hours=retention_hours)
    return Keep(max(depth, 1), min([older, *(c.timestamp for c in commits[:depth])]))


def survey(t: Any, target_file_bytes: int) -> Files:
    """main's live data files (pyiceberg's plan of the table `t`), grouped by partition as
    Iceberg's bin-packing groups them (files of an older partition spec form one group), and the
    files a rewrite takes: those outside the size range, in groups of two or more, or too large."""
    spec, groups = t.spec().spec_id, dict[Any, list[int]]()
    for task in t.scan().plan_files():
        f = task.file
        groups.setdefault(f.partition if f.spec_id == spec else None, []).append(f.file_size_in_bytes)
    small, large = target_file_bytes * MIN_RATIO, target_file_bytes * MAX_RATIO
    taken = [picked for g in groups.values()
             if (picked := [s for s in g if s < small or s > large])
             and (len(picked) >= 2 or sum(picked) > large)]
    return Files(sum(len(g) for g in groups.values()), sum(sum(g) for g in groups.values()),
                 sum(len(p) for p in taken), sum(max(1, round(sum(p) / target_file_bytes)) for p in taken))


def expirable(t: Any, keep: Keep) -> list[int]:
    """The snapshots of table `t` that an expiry with `keep` removes (a dry run's count): Iceberg
    keeps each branch's newest `retain_last` ancestors and those after them newer than `older_than`,
    each tag's snapshot, and unreferenced snapshots newer than `older_than`."""
    older_ms, kept, reached = keep.older_than.timestamp() * 1000, set[int](), set[int]()
    for ref in t.metadata.refs.values():
        kept.add(ref.snapshot_id)
        retaining = ref.snapshot_ref_type == "branch"
        for i, snap in enumerate(_ancestors(t, ref.snapshot_id)):
            reached.add(snap.snapshot_id)
            retaining = retaining and (i < keep.retain_last or snap.timestamp_ms >= older_ms)
            if retaining:
                kept.add(snap.snapshot_id)
    return [s.snapshot_id for s in t.snapshots() if s.snapshot_id not in kept
            and (s.snapshot_id in reached or s.timestamp_ms < older_ms)]


def _ancestors(t: Any, snapshot_id: int | None) -> Iterator[Any]:
    snap = t.snapshot_by_id(snapshot_id) if snapshot_id is not None else None
    while snap is not None:
        yield snap
        snap = t.snapshot_by_id(snap.parent_snapshot_id) if snap.parent_snapshot_id else None


def _rewrite(target: IcebergTarget, target_file_bytes: int) -> int:
    """One `rewrite_data_files` call; the number of files it replaced. Iceberg retries its commit
    on top of concurrent appends by itself (a loader's batch adds files and replaces none).

    Raises:
        CommitConflict: a concurrent commit replaced or deleted a file this rewrite replaces.
    """
    options = {"target-file-size-bytes": target_file_bytes, "min-input-files": 2,
               "min-file-size-bytes": int(target_file_bytes * MIN_RATIO),
               "max-file-size-bytes": int(target_file_bytes * MAX_RATIO)}
    pairs = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
    cat = target.catalog
    with concurrency(target.uri):
        row = target.session().sql(f"CALL {cat.name}.system.rewrite_data_files(table => "
                                   f"'{cat.spark_name}', options => map({pairs}))").collect()[0]
    return int(row["rewritten_data_files_count"])


def _expire(target: IcebergTarget, keep: Keep) -> None:
    # A procedure takes literals only: a timestamp with its offset, whatever the session's time zone
    older = keep.older_than.astimezone(UTC).isoformat(sep=" ", timespec="milliseconds")
    cat = target.catalog
    with concurrency(target.uri):
        target.session().sql(f"CALL {cat.name}.system.expire_snapshots(table => '{cat.spark_name}', "
                             f"older_than => TIMESTAMP '{older}', retain_last => {keep.retain_last})"
                             ).collect()


def _replace_version(t: Any, existing: set[int]) -> int | None:
    """The version (sequence number) of the rewrite's commit: the newest `replace` snapshot of
    main that was not there before (loaders may have committed on top of it since)."""
    for snap in _ancestors(t, t.metadata.current_snapshot_id):
        if snap.snapshot_id in existing:
            return None
        if snap.summary is not None and snap.summary.operation == Operation.REPLACE:
            return int(snap.sequence_number)
    return None
