"""What an Iceberg table's history says: main's snapshots as commits, with lakeinlet's metadata
(its summary properties), newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lakeinlet.incremental.model import TargetCommit
from lakeinlet.incremental.targets import commits as tc


def main_commits(t: Any, limit: int | None = None) -> list[TargetCommit]:
    """main's snapshots in the loaded table `t` (None: no table yet), newest first."""
    out = list[TargetCommit]()
    snap = None if t is None else t.current_snapshot()
    while snap is not None and (limit is None or len(out) < limit):
        out.append(commit_of(snap))
        snap = t.snapshot_by_id(snap.parent_snapshot_id) if snap.parent_snapshot_id else None
    return out


def commit_of(snap: Any) -> TargetCommit:
    """One snapshot as a commit, with lakeinlet's metadata unprefixed."""
    summary = snap.summary.additional_properties if snap.summary else {}
    meta = tc.unprefixed(summary)
    files, size = summary.get("added-data-files"), summary.get("added-files-size")
    return TargetCommit(int(snap.sequence_number), datetime.fromtimestamp(snap.timestamp_ms / 1000, UTC),
                        meta, int(files) if files else 0, int(size) if size else 0)
