"""The loader's orchestration over in-memory fakes: crash points, first run, conflicts, HEAD outcomes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.loader import CRASH_POINTS, Crash, Loader
from lakeinlet.incremental.model import FINAL, ChangeRow, Checkpoint, Outcome, PlannedObject, Position
from lakeinlet.incremental.plan import Caps, rows_from_records
from lakeinlet.incremental.ports import ObjectHead, ReadBatch
from lakeinlet.incremental.targets.commits import removal_outcomes, replaced_outcomes, replacing

pytestmark = pytest.mark.unit
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass
class FakeChangelog:
    versions: list[list[dict[str, Any]]] = field(default_factory=list)

    def add(self, *keys: str) -> None:
        """One changelog version; a key written `-k` is an ObjectRemoved event for `k`, `k#2`
        the creation of a second version of `k` (etag `etag-k#2`)."""
        v = len(self.versions)
        self.versions.append([self._row(v, i, k.lstrip("-"), k.startswith("-")) for i, k in enumerate(keys)])

    @staticmethod
    def _row(v: int, i: int, key: str, removed: bool) -> dict[str, Any]:
        name = key.partition("#")[0]
        return {"_commit_version": v, "event_id": f"{key}-{v}-{removed}", "bucket": "b", "key": name,
                "event_time": T0 + timedelta(seconds=i), "version_id": None, "sequencer": None,
                "event_name": "ObjectRemoved:Delete" if removed else "ObjectCreated:Put",
                "size": None if removed else 10, "etag": f"etag-{key}"}

    def head_version(self) -> int:
        return len(self.versions) - 1

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        recs = [r for v in self.versions[start.complete + 1:] for r in v]
        rows = rows_from_records(recs)
        return rows, dict(Counter(r.commit_version for r in rows))


@dataclass
class FakeStore:
    objects: dict[str, int]

    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead | None]:
        """Each object is as its event saw it (the fakes never overwrite between event and HEAD)."""
        return {(o.bucket, o.key): (ObjectHead(self.objects[o.key], o.etag or "")
                                    if o.key in self.objects else None) for o in objs}

    def list(self, bucket: str, prefix: str) -> Any:
        return iter(())


class FakeReader:
    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any,
             heads: Any = None, single_pass: bool = False) -> ReadBatch:
        return ReadBatch(None, None, {(o.bucket, o.key): 2 for o in objs}, {}, {})


@dataclass
class FakeTarget:
    commits: list[tuple[Position, list[Outcome]]] = field(default_factory=list)

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.commits[-1][0] if self.commits else None, len(self.commits) - 1)

    def schema(self) -> Any:
        return None

    def commit(self, batch: ReadBatch, start: Position, end: Position, batch_id: str,
               outcomes: Sequence[Outcome], crash: Any = None,
               replace: Sequence[PlannedObject] = ()) -> tuple[int, list[Outcome]]:
        if crash:
            crash("written")
        if (self.checkpoint().position or Position(-1)) != start:
            raise CommitConflict("moved")
        earlier = {o.key for o in replacing(outcomes, replace)}
        counts = {("b", k): n for k, n in loaded_rows(self).items() if k in earlier}
        recorded = replaced_outcomes(outcomes, counts)
        self.commits.append((end, recorded))
        return len(self.commits) - 1, recorded

    def commit_position(self, start: Position | None, to: Position, reason: str, operation: str) -> int:
        self.commits.append((to, []))
        return len(self.commits) - 1

    def commit_removal(self, objs: Sequence[PlannedObject], start: Position, end: Position, batch_id: str,
                       decided: Sequence[Outcome], crash: Any = None) -> tuple[int, list[Outcome]]:
        if (self.checkpoint().position or Position(-1)) != start:
            raise CommitConflict("moved")
        gone = {o.key for o in objs}
        counts = {("b", k): n for k, n in loaded_rows(self).items() if k in gone}
        outcomes = removal_outcomes(objs, decided, counts)
        self.commits.append((end, outcomes))
        return len(self.commits) - 1, outcomes

    def writing(self) -> Any:
        return nullcontext()

    def batches_after(self, version: int) -> list[tuple[int, str, list[Outcome]]]:
        return [(v, f"b{v}", c[1]) for v, c in enumerate(self.commits) if v > version]


@dataclass
class FakeLedger:
    rows: list[tuple[int, Outcome]] = field(default_factory=list)

    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]:
        """Final refs, unless a later removal of the same key deleted their rows."""
        removed = {(o.obj.bucket, o.obj.key): v for v, o in self.rows if o.status == "removed"}
        refs = {o.obj.ref for v, o in self.rows if o.status in FINAL
                and v > removed.get((o.obj.bucket, o.obj.key), -1)}
        return {o.ref for o in objs if o.ref in refs}

    def loaded_keys(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str]]:
        newest: dict[tuple[str, str], str] = {}
        for _, o in self.rows:
            if o.status in ("loaded", "removed"):
                newest[(o.obj.bucket, o.obj.key)] = o.status
        return {(o.bucket, o.key) for o in objs if newest.get((o.bucket, o.key)) == "loaded"}

    def last_target_version(self) -> int:
        return max((v for v, _ in self.rows), default=-1)

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None:
        if target_version > self.last_target_version():
            self.rows += [(target_version, o) for o in outcomes]


def make(changelog: FakeChangelog, target: FakeTarget, ledger: FakeLedger, **kw: Any) -> Loader:
    store = FakeStore({k: 10 for k in "abcdefg"} | {"empty": 0})
    return Loader(changelog=changelog, store=store, reader=FakeReader, target=target, ledger=ledger,
                  **{"caps": Caps(2, 10**6)} | kw)


def loaded_rows(target: FakeTarget) -> Counter[str]:
    """Objects present in the target: loads count once each, a removal takes the key out."""
    present: Counter[str] = Counter()
    for _, outs in target.commits:
        for o in outs:
            if o.replaced_rows:  # --on-overwrite replace: the earlier versions' rows are gone
                present.pop(o.obj.key, None)
            if o.status == "loaded" and o.rows:
                present[o.obj.key] += 1
            elif o.status == "removed":
                present.pop(o.obj.key, None)
    return present


@pytest.mark.parametrize("step", CRASH_POINTS)
@pytest.mark.parametrize("crash_batch", [0, 1, 2])
def test_crash_at_any_step_then_rerun_loads_each_object_once(step: str, crash_batch: int) -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "b", "c")
    changelog.add("d", "a", "e")  # "a" again: a duplicate notification
    for _ in range(crash_batch):
        make(changelog, target, ledger).run_batch()
    with pytest.raises(Crash):
        make(changelog, target, ledger, crash_at=step).run_batch()
    make(changelog, target, ledger).drain()
    assert loaded_rows(target) == {k: 1 for k in "abcde"}
    assert Counter(o.obj.key for _, o in ledger.rows) == {k: 1 for k in "abcde"}
    assert target.checkpoint().position == Position(1)


def test_first_run_strategies() -> None:
    changelog = FakeChangelog()
    changelog.add("a")
    assert make(changelog, FakeTarget(), FakeLedger()).start() == Position(-1)
    assert make(changelog, FakeTarget(), FakeLedger(), on_missing_checkpoint="latest").start() == Position(0)
    with pytest.raises(TerminalError, match="no checkpoint"):
        make(changelog, FakeTarget(), FakeLedger(), on_missing_checkpoint="fail").start()


def test_missing_and_empty_objects_are_recorded_without_reading() -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("zzz-deleted", "empty")
    make(changelog, target, ledger).drain()
    assert {o.obj.key: (o.status, o.rows) for _, o in ledger.rows} == {
        "zzz-deleted": ("missing", 0), "empty": ("loaded", 0)}


def test_a_lost_commit_race_replans_from_the_winners_checkpoint() -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "b")
    loser = make(changelog, target, ledger)
    winner = make(changelog, target, ledger)
    real_commit = target.commit

    def commit_after_winner(*args: Any, **kw: Any) -> int:
        target.commit = real_commit  # type: ignore[method-assign]
        winner.run_batch()
        return real_commit(*args, **kw)

    target.commit = commit_after_winner  # type: ignore[method-assign]
    summary = loser.drain()
    assert summary.conflicts == 1 and summary.batches == 0
    assert loaded_rows(target) == {"a": 1, "b": 1}


def test_latest_is_resolved_once_so_later_events_load() -> None:
    """A first run with `latest` records where it starts; events after it are loaded later
    (re-resolving `latest` on every batch skipped them forever)."""
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
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
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "b", "-a", "c")
    loader = make(changelog, target, ledger, caps=Caps(10, 10**6, split_removals=True))
    summary = loader.drain()
    assert summary.batches == 3 and summary.statuses["removed"] == 1
    loaded = sum(o.rows for _, outcomes in target.commits for o in outcomes if o.status == "loaded")
    assert (summary.rows, summary.removed_rows) == (loaded, 1)  # a removal's rows are not "loaded"
    assert loaded_rows(target) == {"b": 1, "c": 1}
    assert [o.status for o in target.commits[1][1]] == ["removed"] and target.commits[1][1][0].rows == 1
    changelog.add("a")  # the same object version, uploaded again after its removal
    make(changelog, target, ledger, caps=Caps(10, 10**6, split_removals=True)).drain()
    assert loaded_rows(target) == {"a": 1, "b": 1, "c": 1}


def test_append_only_keeps_rows_of_removed_objects() -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "-a", "b")
    make(changelog, target, ledger).drain()
    assert loaded_rows(target) == {"b": 1}  # newest event of a is its removal: nothing to load
    assert {o.obj.key: o.status for _, o in ledger.rows} == {"a": "filtered", "b": "loaded"}


@pytest.mark.parametrize("crash_at", [None, "committed"])
def test_replace_deletes_earlier_rows_even_when_the_ledger_lags_the_target(crash_at: str | None) -> None:
    """--on-overwrite replace: the load of a's second version deletes the first's rows, also when
    the first's commit is not in the ledger yet (its loader died after committing)."""
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    caps = Caps(10, 10**6, replace_overwritten=True)
    changelog.add("a", "b")
    with pytest.raises(Crash) if crash_at else nullcontext():
        make(changelog, target, ledger, caps=caps, crash_at=crash_at).drain()
    assert ledger.last_target_version() == (-1 if crash_at else 0)
    changelog.add("a#2")
    make(changelog, target, ledger, caps=caps).drain()
    assert loaded_rows(target) == {"a": 1, "b": 1}
    assert [(o.obj.etag, o.replaced_rows) for _, o in ledger.rows if o.obj.key == "a"] == [
        ("etag-a", 0), ("etag-a#2", 1)]


def test_append_keeps_the_earlier_versions_rows() -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "b")
    changelog.add("a#2")
    make(changelog, target, ledger, caps=Caps(1, 10**6)).drain()
    assert loaded_rows(target) == {"a": 2, "b": 1}


def test_a_null_version_id_is_no_version_so_each_put_is_its_own_object_version() -> None:
    """Changelog rows written before the poller dropped S3's "null" version id: two PUTs of one
    key are told apart by etag, so the second is not skipped as already loaded."""
    first, second = (PlannedObject("b", "k", f'"etag-{n}"', "null", 10, f"id-{n}", T0, 0) for n in (1, 2))
    assert (first.identity, second.identity) == ("etag-1", "etag-2")
