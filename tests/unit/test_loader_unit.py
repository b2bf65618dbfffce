"""The loader's orchestration over in-memory fakes: crash points, first run, conflicts, HEAD outcomes."""

from __future__ import annotations

from collections import Counter
from contextlib import nullcontext
from typing import Any

import pytest

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import PlannedObject, Position
from lakeinlet.incremental.plan import Caps
from lakeinlet.incremental.ports import ReadBatch
from tests.fakes import T0, FakeChangelog, FakeLedger, FakeStore, MemoryTarget, loaded_rows, make
from tests.targets import CRASH_POINTS, Crash, crashing

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("step", CRASH_POINTS)
@pytest.mark.parametrize("crash_batch", [0, 1, 2])
def test_crash_at_any_step_then_rerun_loads_each_object_once(step: str, crash_batch: int) -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b", "c")
    changelog.add("d", "a", "e")  # "a" again: a duplicate notification
    for _ in range(crash_batch):
        make(changelog, target, ledger).run_batch()
    with pytest.raises(Crash):
        crashing(make(changelog, target, ledger), step).run_batch()
    make(changelog, target, ledger).drain()
    assert loaded_rows(target) == {k: 1 for k in "abcde"}
    assert Counter(o.obj.key for _, o in ledger.rows) == {k: 1 for k in "abcde"}
    assert target.checkpoint().position == Position(1)


def test_first_run_strategies() -> None:
    changelog = FakeChangelog()
    changelog.add("a")
    assert make(changelog, MemoryTarget(), FakeLedger()).start() == Position(-1)
    assert make(changelog, MemoryTarget(), FakeLedger(),
                on_missing_checkpoint="latest").start() == Position(0)
    with pytest.raises(TerminalError, match="no checkpoint"):
        make(changelog, MemoryTarget(), FakeLedger(), on_missing_checkpoint="fail").start()


def test_missing_and_empty_objects_are_recorded_without_reading() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("zzz-deleted", "empty")
    make(changelog, target, ledger).drain()
    assert {o.obj.key: (o.status, o.rows) for _, o in ledger.rows} == {
        "zzz-deleted": ("missing", 0), "empty": ("loaded", 0)}


def test_a_lost_commit_race_replans_from_the_winners_checkpoint() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    loser = make(changelog, target, ledger)
    winner = make(changelog, target, ledger)
    real_publish = target.publish

    def publish_after_winner(*args: Any, **kw: Any) -> int:
        target.publish = real_publish  # type: ignore[method-assign]
        winner.run_batch()
        return real_publish(*args, **kw)

    target.publish = publish_after_winner  # type: ignore[method-assign]
    summary = loser.drain()
    assert summary.conflicts == 1 and summary.batches == 0
    assert loaded_rows(target) == {"a": 1, "b": 1}


def test_latest_is_resolved_once_so_later_events_load() -> None:
    """A first run with `latest` records where it starts; events after it are loaded later
    (re-resolving `latest` on every batch skipped them forever)."""
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a")
    first = make(changelog, target, ledger, on_missing_checkpoint="latest").drain()
    assert first.batches == 0 and target.checkpoint().position == Position(0)
    changelog.add("b")
    changelog.add("c")
    make(changelog, target, ledger, on_missing_checkpoint="latest").drain()
    assert loaded_rows(target) == {"b": 1, "c": 1}


def test_removals_delete_rows_in_changelog_order_and_a_recreated_object_loads_again() -> None:
    """--on-delete remove-rows: a batch holds only creations or only removals, so a removal
    never lands before the load it follows; the same version re-created loads again."""
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    store = FakeStore({"a": 10, "b": 10, "c": 10})
    changelog.add("a", "b", "-a", "c")
    loader = make(changelog, target, ledger, store=store, caps=Caps(10, 10**6, split_removals=True))
    summary = loader.drain(max_batches=1)
    del store.objects["a"]  # deleted after its load: its removal comes next (a HEAD checks it)
    summary.add(loader.drain())
    assert summary.batches == 3 and summary.statuses["removed"] == 1
    loaded = sum(o.rows for _, _, outcomes in target.batches_after(-1) for o in outcomes
                 if o.status == "loaded")
    assert (summary.rows, summary.removed_rows) == (loaded, 1)  # a removal's rows are not "loaded"
    assert loaded_rows(target) == {"b": 1, "c": 1}
    removal = target.batches_after(-1)[1][2]
    assert [o.status for o in removal] == ["removed"] and removal[0].rows == 1
    changelog.add("a")  # the same object version, uploaded again after its removal
    store.objects["a"] = 10
    make(changelog, target, ledger, store=store, caps=Caps(10, 10**6, split_removals=True)).drain()
    assert loaded_rows(target) == {"a": 1, "b": 1, "c": 1}


def test_append_only_keeps_rows_of_removed_objects() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "-a", "b")
    make(changelog, target, ledger).drain()
    assert loaded_rows(target) == {"b": 1}  # newest event of a is its removal: nothing to load
    assert {o.obj.key: o.status for _, o in ledger.rows} == {"a": "filtered", "b": "loaded"}


@pytest.mark.parametrize("crash_at", [None, "committed"])
def test_replace_deletes_earlier_rows_even_when_the_ledger_lags_the_target(crash_at: str | None) -> None:
    """--on-overwrite replace: the load of a's second version deletes the first's rows, also when
    the first's commit is not in the ledger yet (its loader died after committing)."""
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    caps = Caps(10, 10**6, replace_overwritten=True)
    changelog.add("a", "b")
    with pytest.raises(Crash) if crash_at else nullcontext():
        loader = make(changelog, target, ledger, caps=caps)
        (crashing(loader, crash_at) if crash_at else loader).drain()
    assert ledger.last_target_version() == (-1 if crash_at else 0)
    changelog.add("a#2")
    make(changelog, target, ledger, caps=caps).drain()
    assert loaded_rows(target) == {"a": 1, "b": 1}
    assert [(o.obj.etag, o.replaced_rows) for _, o in ledger.rows if o.obj.key == "a"] == [
        ("etag-a", 0), ("etag-a#2", 1)]


def test_append_keeps_the_earlier_versions_rows() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    changelog.add("a#2")
    make(changelog, target, ledger, caps=Caps(1, 10**6)).drain()
    assert loaded_rows(target) == {"a": 2, "b": 1}


def test_a_null_version_id_is_no_version_so_each_put_is_its_own_object_version() -> None:
    """Changelog rows written before the poller dropped S3's "null" version id: two PUTs of one
    key are told apart by etag, so the second is not skipped as already loaded."""
    first, second = (PlannedObject("b", "k", f'"etag-{n}"', "null", 10, f"id-{n}", T0, 0) for n in (1, 2))
    assert (first.identity, second.identity) == ("etag-1", "etag-2")


def test_malformed_records_of_loaded_objects_are_counted_for_the_console() -> None:
    """A loaded object's malformed records go to the quarantine table; the run says how many."""

    class ReaderWithBadRecords:
        def read(self, objs: Any, batch_id: str, table_schema: Any, heads: Any = None,
                 single_pass: bool = False) -> ReadBatch:
            return ReadBatch(None, None, {(o.bucket, o.key): 2 for o in objs},
                             {(o.bucket, o.key): 3 for o in objs if o.key == "b"}, {})

    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    summary = make(changelog, target, ledger, reader=ReaderWithBadRecords).drain()
    assert summary.malformed_records == 3 and summary.rows == 4
