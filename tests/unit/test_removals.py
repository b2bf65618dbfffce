"""--on-delete remove-rows does not take a removal event on its word: every removal HEADs its key,
and one older than the version loaded, or of a key still there, removes nothing (over the fakes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.incremental.model import FILTERED, REMOVED, PlannedObject
from lakeinlet.incremental.plan import Caps
from lakeinlet.incremental.ports import Unreadable
from tests.fakes import T0, FakeChangelog, FakeLedger, FakeStore, MemoryTarget, loaded_rows, make

pytestmark = pytest.mark.unit
DENIED = Unreadable("access denied (403) reading s3://b/a", gone=False)


@dataclass
class DeniedStore(FakeStore):
    """Loads as FakeStore; a HEAD of a key it does not hold is denied (no s3:ListBucket)."""

    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], Any]:
        return {ref: head or DENIED for ref, head in super().head_many(objs).items()}


@pytest.mark.parametrize(("seconds", "there", "store_cls", "removed", "reason"), [
    (5, False, FakeStore, True, ""),  # a genuine removal: after the load, the key is gone
    (-5, False, FakeStore, False, "is older than the version loaded (event at 2026-11-01T00:00:00"),
    (5, True, FakeStore, False, "but s3://b/a is still there (etag etag-a"),  # forged, or re-created since
    (5, False, DeniedStore, False, "could not tell whether it is gone (access denied (403)"),
])
def test_a_removal_removes_rows_only_when_it_is_newer_than_the_load_and_the_key_is_gone(
        seconds: int, there: bool, store_cls: type[FakeStore], removed: bool, reason: str) -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")  # a's event at T0
    removal = changelog._row(1, 0, "a", True) | {"event_time": T0 + timedelta(seconds=seconds)}
    changelog.versions.append([removal])
    store = store_cls({"a": 10, "b": 10})
    loader = make(changelog, target, ledger, store=store, caps=Caps(10, 10**6, split_removals=True))
    loader.drain(max_batches=1)
    if not there:
        del store.objects["a"]
    loader.drain()
    assert loaded_rows(target) == ({"b": 1} if removed else {"a": 1, "b": 1})
    (outcome,) = [o for v, o in ledger.rows if v == 1]
    assert (outcome.status, outcome.rows) == ((REMOVED, 1) if removed else (FILTERED, 0))
    assert reason in outcome.reason, outcome.reason


def test_the_delta_ledger_gives_the_newest_loaded_versions_event_time_unless_removed_since(
        tmp_path: Path) -> None:
    from lakeinlet.aws import AwsSection
    from lakeinlet.incremental.ledger import DeltaLedger
    from lakeinlet.incremental.model import LOADED, Outcome

    ledger = DeltaLedger(str(tmp_path / "ledger"), AwsSection(), "app")

    def obj(key: str, seconds: int) -> PlannedObject:
        at = T0 + timedelta(seconds=seconds)
        return PlannedObject("b", key, f"e{seconds}", None, 1, f"{key}{seconds}", at, 0)

    ledger.append([Outcome(obj("a", 0), LOADED), Outcome(obj("b", 0), LOADED),
                   Outcome(obj("c", 0), FILTERED)], 0, "b0")
    ledger.append([Outcome(obj("a", 5), LOADED), Outcome(obj("b", 9), REMOVED)], 1, "b1")
    asked = [obj(k, 0) for k in "abcd"]
    assert ledger.loaded_times(asked) == {("b", "a"): T0 + timedelta(seconds=5)}
