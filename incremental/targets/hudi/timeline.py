"""The Hudi table's active timeline as hudi-rs reads it: its completed commits, and whether Hudi
has archived commits a reader still needs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from lakeinlet.incremental.model import TargetCommit
from lakeinlet.incremental.targets import commits as tc

ARCHIVED_AFTER = 20
"""Hudi keeps at least this many commits active (hoodie.keep.min.commits); older ones are
archived where hudi-rs does not read them."""


def commits(table: Any, limit: int | None = None) -> list[TargetCommit]:
    """Completed commits of a hudi-rs table's active timeline (None: no table), newest first."""
    if table is None:
        return []
    timeline = table.get_timeline()
    instants = timeline.get_completed_commits(desc=True)
    return [_commit(i, json.loads(timeline.get_instant_metadata_in_json(i))) for i in instants[:limit]]


def archived_past(found: list[TargetCommit], table: Any, target_version: int) -> bool:
    """Whether Hudi may have archived commits after `target_version` (older than the oldest of
    `found`, the active commits, while the timeline is long enough to archive)."""
    behind = bool(found) and 0 <= target_version < found[-1].version
    # Hudi archives by commits and replacecommits (clustering) together
    active = len(found) + len(table.get_timeline().get_completed_replacecommits() if table else [])
    return behind and active >= ARCHIVED_AFTER


def _commit(instant: Any, meta: dict[str, Any]) -> TargetCommit:
    stats = [s for files in (meta.get("partitionToWriteStats") or {}).values() for s in files or []]
    when = datetime.fromtimestamp(int(instant.epoch_mills) / 1000, UTC)
    return TargetCommit(int(instant.timestamp), when, tc.unprefixed(meta.get("extraMetadata") or {}),
                        len(stats), sum(int(s.get("totalWriteBytes") or 0) for s in stats))
