"""Backfill diff (pure): listed objects nobody knows, optionally modified since a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from lakeinlet.incremental.commands.backfill import EVENT_NAME, diff, synthetic_events
from lakeinlet.incremental.ports import ListedObject

pytestmark = pytest.mark.unit
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def obj(key: str, etag: str, minutes: int = 0) -> ListedObject:
    return ListedObject("b", key, 10, etag, T0 + timedelta(minutes=minutes))


def test_known_versions_are_skipped_but_an_overwritten_object_is_not() -> None:
    listed = [obj("a", "e1"), obj("b", "e2"), obj("c", "e3")]
    plan = diff(listed, {("b", "a", "e1"), ("b", "b", "old-etag")}, None)
    assert [o.key for o in plan.missing] == ["b", "c"] and plan.listed == 3 and plan.bytes == 20


def test_since_limits_to_recent_objects() -> None:
    plan = diff([obj("old", "e1", 0), obj("new", "e2", 30)], set(), T0 + timedelta(minutes=10))
    assert [o.key for o in plan.missing] == ["new"]
    assert "1 objects, 10 bytes to add (of 2 listed)" in plan.lines()[-1]


def test_synthetic_events_look_like_created_events_with_their_own_envelope() -> None:
    events = synthetic_events([obj("k", "e")])
    e = events[0].event
    assert (e.event_name, e.envelope, e.etag, e.size, e.is_created) == (EVENT_NAME, "backfill", "e", 10, True)
    assert events[0].poll_batch.startswith("backfill-")
