"""Pure planning: caps, splitting a changelog commit and resuming exactly, newest event, filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeinlet.incremental.model import FILTERED, TOO_LARGE, ChangeRow, Position
from lakeinlet.incremental.plan import Caps, Filters, newest_per_object, plan_batch, rows_from_records, take

pytestmark = pytest.mark.unit
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def rec(version: int, key: str, sec: int = 0, size: int = 10, etag: str = "e",
        name: str = "ObjectCreated:Put", bucket: str = "b") -> dict[str, Any]:
    return {"_commit_version": version, "event_id": f"{key}-{etag}-{name}", "bucket": bucket, "key": key,
            "event_name": name, "event_time": T0 + timedelta(seconds=sec), "size": size, "etag": etag,
            "version_id": None, "sequencer": None}


def sizes(rows: list[ChangeRow]) -> dict[int, int]:
    out: dict[int, int] = {}
    for r in rows:
        out[r.commit_version] = out.get(r.commit_version, 0) + 1
    return out


def nothing_known(objs: Any) -> set[tuple[str, str, str]]:
    return set()


def test_rows_are_ordered_within_a_version_deterministically() -> None:
    rows = rows_from_records([rec(1, "b", 5), rec(0, "z", 9), rec(1, "a", 1), rec(0, "y", 3)])
    assert [(r.commit_version, r.key, r.index) for r in rows] == [(0, "y", 0), (0, "z", 1), (1, "a", 0),
                                                                  (1, "b", 1)]


def test_a_commit_bigger_than_the_caps_is_split_and_resumed_exactly() -> None:
    rows = rows_from_records([rec(0, f"k{i}", i) for i in range(5)] + [rec(1, "x", 99)])
    caps = Caps(max_files=2, max_bytes=10**9)
    taken, pos = take(rows, Position(-1), caps, sizes(rows))
    assert [r.key for r in taken] == ["k0", "k1"] and pos == Position(-1, 2)
    taken, pos = take(rows, pos, caps, sizes(rows))
    assert [r.key for r in taken] == ["k2", "k3"] and pos == Position(-1, 4)
    taken, pos = take(rows, pos, caps, sizes(rows))
    assert [r.key for r in taken] == ["k4", "x"] and pos == Position(1)
    assert take(rows, pos, caps, sizes(rows)) == ([], Position(1))


def test_bytes_cap_bounds_the_batch_but_always_takes_one_row() -> None:
    rows = rows_from_records([rec(0, "a", 0, size=600), rec(0, "b", 1, size=600)])
    taken, pos = take(rows, Position(-1), Caps(100, 1000), sizes(rows))
    assert [r.key for r in taken] == ["a"] and pos == Position(-1, 1)


@given(st.lists(st.integers(1, 4), min_size=1, max_size=8), st.integers(1, 5))
def test_successive_batches_cover_every_row_once(per_version: list[int], max_files: int) -> None:
    records = [rec(v, f"v{v}k{i}", i) for v, n in enumerate(per_version) for i in range(n)]
    rows = rows_from_records(records)
    seen, pos = [], Position(-1)
    for _ in range(100):
        taken, pos = take(rows, pos, Caps(max_files, 10**9), sizes(rows))
        if not taken:
            break
        seen += [r.key for r in taken]
    assert seen == [r.key for r in rows]
    assert pos == Position(len(per_version) - 1)


def test_newest_event_per_object_wins() -> None:
    rows = rows_from_records([rec(0, "a", 1, etag="old"), rec(1, "a", 5, etag="new"), rec(1, "b", 2)])
    kept, superseded = newest_per_object(rows)
    assert [(r.key, r.etag) for r in kept] == [("b", "e"), ("a", "new")] and superseded == 1


def test_filters_removals_and_too_large_are_decided_in_planning() -> None:
    rows = rows_from_records([rec(0, "in/a.json"), rec(0, "in/tmp/x.json", 1), rec(0, "out/c.json", 2),
                              rec(0, "in/d.csv", 3), rec(0, "in/big.json", 4, size=5000),
                              rec(0, "in/gone.json", 5, name="ObjectRemoved:Delete")])
    filters = Filters(prefix=("in/",), suffix=(".json",), ignore_prefix=("in/tmp/",))
    plan = plan_batch(rows, Position(-1), Caps(100, 1000), filters, sizes(rows), nothing_known)
    assert [o.key for o in plan.to_read] == ["in/a.json"]
    decided = {o.obj.key: o.status for o in plan.decided}
    assert decided == {"in/tmp/x.json": FILTERED, "out/c.json": FILTERED, "in/d.csv": FILTERED,
                       "in/big.json": TOO_LARGE, "in/gone.json": FILTERED}
    assert plan.end == Position(0) and plan.events == 6


def test_regex_filter_and_known_objects_are_skipped() -> None:
    rows = rows_from_records([rec(0, "x/2026/a.json"), rec(0, "x/old/b.json", 1), rec(0, "x/2026/c.json", 2)])
    plan = plan_batch(rows, Position(-1), Caps(100, 10**6), Filters(regex=r"/\d{4}/"), sizes(rows),
                      lambda objs: {o.ref for o in objs if o.key.endswith("c.json")})
    assert [o.key for o in plan.to_read] == ["x/2026/a.json"]
    assert plan.skipped_known == 1


def test_position_round_trips_and_rejects_unknown_formats() -> None:
    pos = Position(41, 7)
    assert Position.from_json(pos.to_json()) == pos
    with pytest.raises(ValueError, match="format"):
        Position.from_json('{"format": 99, "complete": 1}')


def test_superseded_events_ride_along_without_counting_to_max_files() -> None:
    """Issue 36: 1,000 objects with 8 overwritten twice were split 992 + 8 under --max-files 1000."""
    again = [rec(0, "k1", 10, etag="v2"), rec(0, "k2", 11, etag="v2"), rec(0, "k6", 12), rec(1, "k7", 0)]
    records = [rec(0, f"k{i}", i) for i in range(6)] + again
    rows = rows_from_records(records)
    caps = Caps(max_files=6, max_bytes=10**9)
    taken, pos = take(rows, Position(-1), caps, sizes(rows))
    assert [r.key for r in taken] == ["k0", "k1", "k2", "k3", "k4", "k5", "k1", "k2"]
    assert pos == Position(-1, 8)  # resumes exactly at k6, inside the split commit
    plan = plan_batch(rows, Position(-1), caps, Filters(), sizes(rows), nothing_known)
    assert len(plan.to_read) == 6 and plan.superseded == 2
    taken, pos = take(rows, pos, caps, sizes(rows))
    assert [r.key for r in taken] == ["k6", "k7"] and pos == Position(1)


def test_a_superseding_event_still_bounds_the_bytes() -> None:
    rows = rows_from_records([rec(0, "a", 0, size=400), rec(0, "b", 1, size=400), rec(0, "a", 2, size=700)])
    taken, pos = take(rows, Position(-1), Caps(100, 1000), sizes(rows))
    assert [r.key for r in taken] == ["a", "b"] and pos == Position(-1, 2)
