"""What Iceberg's snapshot expiry must keep of main for the loader: the chain down to the checkpoint's
commit and the loader commit before it, whatever the retention and the writers' clocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lakeinlet.incremental.model import LOAD, RESET, Position, TargetCommit
from lakeinlet.incremental.targets.iceberg.maintain import keep_of

pytestmark = pytest.mark.unit
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def at(minutes_ago: float, operation: str | None = None, app: str = "app") -> TargetCommit:
    """A commit of main `minutes_ago` before NOW: a loader's (with `operation`) or a rewrite's."""
    meta = {} if operation is None else {"operation": operation, "app_id": app,
                                         "position": Position(int(minutes_ago)).to_json()}
    return TargetCommit(0, NOW - timedelta(minutes=minutes_ago), meta)


def test_the_chain_down_to_the_load_before_the_checkpoint_is_kept() -> None:
    # newest first: two rewrites, the checkpoint's load, a reset, the load before, older history
    commits = [at(1), at(2), at(3, LOAD), at(4, RESET), at(5, LOAD), at(6, LOAD), at(7)]
    keep = keep_of(commits, "app", 0, NOW)
    assert keep.retain_last == 5
    assert keep.older_than == NOW - timedelta(minutes=5)


def test_a_long_retention_is_kept_as_asked() -> None:
    keep = keep_of([at(1), at(3, LOAD), at(5, LOAD), at(600, LOAD)], "app", 24, NOW)
    assert (keep.retain_last, keep.older_than) == (3, NOW - timedelta(hours=24))


def test_a_commit_with_a_clock_behind_lowers_older_than() -> None:
    commits = [at(1), at(30), at(3, LOAD), at(5, LOAD)]  # a rewrite on a machine 29 minutes behind
    assert keep_of(commits, "app", 0, NOW).older_than == NOW - timedelta(minutes=30)


def test_with_one_loader_commit_or_none_of_this_app() -> None:
    assert keep_of([at(1), at(2, LOAD), at(3)], "app", 0, NOW).retain_last == 2
    other = keep_of([at(1), at(2, LOAD, app="other")], "app", 1, NOW)
    assert (other.retain_last, other.older_than) == (1, NOW - timedelta(hours=1))
    assert keep_of([], "app", 0, NOW).retain_last == 1
