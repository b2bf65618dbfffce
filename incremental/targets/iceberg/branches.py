"""Staging branches other loaders left: their age, by their last commit's time, and which `vacuum`
may drop (a branch a live loader may still publish has a commit younger than the retention)."""

from __future__ import annotations

from typing import Any

PREFIX = "lakeinlet_"


def branch_ages(metadata: Any, own: str, now_ms: float) -> dict[str, float]:
    """Hours since the last commit of each lakeinlet staging branch but `own` (pyiceberg's table
    metadata); a branch whose snapshot is gone is as old as can be."""
    out = {}
    for name, ref in metadata.refs.items():
        if name.startswith(PREFIX) and name != own:
            snap = metadata.snapshot_by_id(ref.snapshot_id)
            out[name] = (now_ms - snap.timestamp_ms) / 3_600_000 if snap is not None else float("inf")
    return out


def stale(ages: dict[str, float], retention_hours: float) -> list[str]:
    """The branches whose last commit is older than the retention: their loaders are gone (a live
    loader commits to its branch when it stages, and publishes within the batch)."""
    return [name for name, age in ages.items() if age > retention_hours]


def describe(name: str, age: float) -> str:
    return f"branch {name} (last commit {age:.1f} h ago)"
