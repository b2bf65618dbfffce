"""Vacuum of a Delta table (the target's, the quarantine's): delta-rs's full vacuum."""

from __future__ import annotations

from deltalake import DeltaTable


def vacuum_table(dt: DeltaTable | None, retention_hours: float, dry_run: bool) -> list[str]:
    """delta-rs's full vacuum: every file the log does not reference, older than the retention
    (files of a batch still being written are newer, so they stay)."""
    if dt is None:
        return []
    return sorted(dt.vacuum(retention_hours=int(retention_hours), dry_run=dry_run,
                            enforce_retention_duration=False, full=True))
