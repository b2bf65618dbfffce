"""What a Delta table's history says: each commit's lakeinlet metadata, and the loader's checkpoint
as of a version (the newest commit that carries one)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from deltalake import DeltaTable

from lakeinlet.incremental.model import Checkpoint, Position, TargetCommit
from lakeinlet.incremental.targets import commits as tc


def checkpoint_in(dt: DeltaTable, app_id: str) -> Checkpoint:
    """The checkpoint of `app_id` as of `dt`'s version: the position its newest loader commit
    records, or (no such commit in the history) the `txn` version alone."""
    version = int(dt.version())
    txn = dt.transaction_version(app_id)
    found = Checkpoint(None, version)
    if txn is not None:
        for limit in (1, 16, None):  # the newest commit nearly always holds it: read few first
            found = tc.checkpoint_from([commit_of(h) for h in dt.history(limit)], app_id, version)
            if found.position is not None:
                break
        else:
            found = Checkpoint(Position(int(txn)), version)
    return found


def commit_of(h: dict[str, Any]) -> TargetCommit:
    """One entry of delta-rs's `history()` as a commit, with lakeinlet's metadata unprefixed."""
    meta = tc.unprefixed(h)
    when = datetime.fromtimestamp(int(h["timestamp"]) / 1000, UTC)
    files = int(meta["files"]) if "files" in meta else None
    size = int(meta["bytes"]) if "bytes" in meta else None
    return TargetCommit(int(h["version"]), when, meta, files, size)
