"""An identical re-upload is not new data: a new version of a key whose newest loaded version has
the same ETag is recorded `filtered` ("identical content") in planning, never read; an older
version's bytes (its rows replaced since) or a removed object's load again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import CORRUPT, FILTERED, LOADED, REMOVED, Outcome, PlannedObject, Position
from lakeinlet.incremental.plan import IDENTICAL, Caps, Filters, plan_batch, rows_from_records
from tests.fakes import T0, FakeChangelog, FakeLedger, MemoryTarget, loaded_rows, make
from tests.unit.test_plan import nothing_known, rec, sizes

pytestmark = pytest.mark.unit
T = datetime(2026, 11, 27, tzinfo=UTC)


def version(key: str, etag: str, vid: str) -> PlannedObject:
    return PlannedObject("land", key, f'"{etag}"', vid, 10, f"e-{vid}", T, 0)


def test_only_the_newest_loaded_versions_bytes_are_identical(tmp_path: Path) -> None:
    ledger = DeltaLedger(str(tmp_path / "t_ledger"), AwsSection(), "app")
    ledger.append([Outcome(version(k, "E1", "v1"), LOADED) for k in "abcd"], 1, "b1")
    ledger.append([Outcome(version("b", "E2", "v2"), LOADED), Outcome(version("c", "E1", "v1"), REMOVED),
                   Outcome(version("d", "E9", "v2"), CORRUPT)], 2, "b2")
    asked = [version("a", "E1", "v5"), version("a", "E1", "v1"), version("b", "E1", "v5"),
             version("c", "E1", "v5"), version("d", "E1", "v5"), version("e", "E1", "v5"),
             PlannedObject("land", "a", None, "v6", 10, "e6", T, 0)]
    assert ledger.identical(asked) == {("land", "a", "v5"): "v1", ("land", "d", "v5"): "v1"}
    # b: its newest loaded bytes are E2 (E1's rows may be replaced); c: removed; a/v1: the same
    # version (a duplicate notification, `known`'s); e: never loaded; no ETag: nothing to compare


def test_planning_records_an_identical_reupload_as_filtered_without_reading_it() -> None:
    rows = rows_from_records([rec(0, "in/a.json"), rec(0, "in/b.json", 1)])
    plan = plan_batch(rows, Position(-1), Caps(100, 1000), Filters(), sizes(rows), nothing_known,
                      lambda objs: {o.ref: "v1" for o in objs if o.key == "in/a.json"})
    assert [o.key for o in plan.to_read] == ["in/b.json"]
    [(outcome)] = plan.decided
    etag = (outcome.obj.etag or "").strip('"')
    assert (outcome.obj.key, outcome.status) == ("in/a.json", FILTERED)
    assert outcome.reason == IDENTICAL.format(etag=etag, version="v1")
    assert outcome.reason.startswith("identical content")


def test_a_loader_drain_loads_a_key_once_per_distinct_content_on_a_versioned_bucket() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    for n, (vid, etag) in enumerate([("v1", "E"), ("v2", "E"), ("v3", "F"), ("v4", "F")]):
        row = FakeChangelog._row(n, 0, "a", False) | {"version_id": vid, "etag": etag,
                                                       "event_time": T0 + timedelta(seconds=n)}
        changelog.versions.append([row])
        make(changelog, target, ledger).drain()  # one drain per upload: a batch keeps a key's newest
    statuses = [(o.obj.version_id, o.status) for _, o in ledger.rows]
    assert statuses == [("v1", LOADED), ("v2", FILTERED), ("v3", LOADED), ("v4", FILTERED)]
    assert ledger.rows[1][1].reason == IDENTICAL.format(etag="E", version="v1")
    assert ledger.rows[3][1].reason == IDENTICAL.format(etag="F", version="v3")
    assert sum(loaded_rows(target).values()) == 2  # v1's and v3's rows, not v2's or v4's again
