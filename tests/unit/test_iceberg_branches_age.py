"""`vacuum` drops the staging branches whose last commit is older than the retention, and says
each one's true age."""

from __future__ import annotations

from types import SimpleNamespace

from lakeinlet.incremental.targets.iceberg import branches

HOUR = 3_600_000
NOW = 1_000 * HOUR


def metadata() -> SimpleNamespace:
    snaps = {1: SimpleNamespace(timestamp_ms=NOW - 200 * HOUR),
             2: SimpleNamespace(timestamp_ms=NOW - HOUR // 10)}
    refs = {"main": SimpleNamespace(snapshot_id=1), "lakeinlet_dead": SimpleNamespace(snapshot_id=1),
            "lakeinlet_live": SimpleNamespace(snapshot_id=2), "lakeinlet_own": SimpleNamespace(snapshot_id=1),
            "lakeinlet_gone": SimpleNamespace(snapshot_id=3), "audit": SimpleNamespace(snapshot_id=1)}
    return SimpleNamespace(refs=refs, snapshot_by_id=snaps.get)


def test_only_branches_older_than_the_retention_are_stale() -> None:
    ages = branches.branch_ages(metadata(), "lakeinlet_own", NOW)
    assert ages == {"lakeinlet_dead": 200.0, "lakeinlet_live": 0.1, "lakeinlet_gone": float("inf")}
    assert branches.stale(ages, 168) == ["lakeinlet_dead", "lakeinlet_gone"]
    assert branches.describe("lakeinlet_live", ages["lakeinlet_live"]) == \
        "branch lakeinlet_live (last commit 0.1 h ago)"
