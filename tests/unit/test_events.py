"""ObjectEvent ids and the changelog row round trip."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from lakeinlet.changelog.schema import CHANGELOG_SCHEMA, from_changelog_row, to_changelog_table
from lakeinlet.events import ObjectEvent, ReceivedEvent

pytestmark = pytest.mark.unit

T0 = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
BASE = ObjectEvent("bkt", "a/b c+d.json", "ObjectCreated:Put", T0, size=10, etag="e1")


def test_event_id_is_deterministic_and_ignores_delivery_details() -> None:
    assert BASE.event_id == ObjectEvent("bkt", "a/b c+d.json", "ObjectCreated:Put", T0, 10, "e1").event_id
    assert BASE.event_id == replace(BASE, region="eu-west-1", envelope="sns").event_id


@pytest.mark.parametrize("change", [
    {"bucket": "other"}, {"key": "a/b c+d.jsonx"}, {"etag": "e2"},
    {"event_name": "ObjectCreated:Copy"}, {"version_id": "v1"}, {"sequencer": "0A"},
])
def test_event_id_changes_with_identity(change: dict[str, str]) -> None:
    assert replace(BASE, **change).event_id != BASE.event_id


def test_removal_without_etag_uses_event_time() -> None:
    gone = ObjectEvent("bkt", "k", "ObjectRemoved:Delete", T0)
    assert gone.is_removed and not gone.is_created
    assert gone.event_id != replace(gone, event_time=T0.replace(second=1)).event_id


@pytest.mark.parametrize(("name", "removed"), [
    ("ObjectRemoved:DeleteMarkerCreated", True), ("LifecycleExpiration:Delete", True),
    ("LifecycleExpiration:DeleteMarkerCreated", True), ("LifecycleTransition", False),
    ("ObjectRestore:Delete", False), ("ObjectCreated:Put", False),
])
def test_a_lifecycle_expiration_is_a_removal(name: str, removed: bool) -> None:
    """A lifecycle rule's deletion removes the object as a DeleteObject does; a transition or the
    expiry of a restored copy does not."""
    event = replace(BASE, event_name=name)
    assert event.is_removed is removed


def test_changelog_round_trip() -> None:
    received = ReceivedEvent(BASE, "msg-1", T0, "batch-1")
    table = to_changelog_table([received])
    assert table.schema == CHANGELOG_SCHEMA
    row = table.to_pylist()[0]
    assert row["event_id"] == BASE.event_id and row["received_date"] == "2026-11-01"
    assert from_changelog_row(row) == BASE
