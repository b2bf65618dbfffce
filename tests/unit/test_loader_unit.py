"""The loader's orchestration over in-memory fakes: crash points, first run, conflicts, HEAD outcomes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.loader import CRASH_POINTS, Crash, Loader
from lakeinlet.incremental.model import FINAL, ChangeRow, Checkpoint, Outcome, PlannedObject, Position
from lakeinlet.incremental.plan import Caps, rows_from_records
from lakeinlet.incremental.ports import ObjectHead, ReadBatch

pytestmark = pytest.mark.unit
T0 = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass
class FakeChangelog:
    versions: list[list[dict[str, Any]]] = field(default_factory=list)

    def add(self, *keys: str) -> None:
        v = len(self.versions)
        self.versions.append([{"_commit_version": v, "event_id": f"{k}-{v}", "bucket": "b", "key": k,
                               "event_name": "ObjectCreated:Put", "event_time": T0, "size": 10,
                               "etag": f"etag-{k}", "version_id": None, "sequencer": None} for k in keys])

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
        return {(o.bucket, o.key): (ObjectHead(self.objects[o.key], f"etag-{o.key}")
                                    if o.key in self.objects else None) for o in objs}

    def list(self, bucket: str, prefix: str) -> Any:
        return iter(())


class FakeReader:
    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any,
             heads: Any = None) -> ReadBatch:
        return ReadBatch(None, None, {(o.bucket, o.key): 2 for o in objs}, {}, {})


@dataclass
class FakeTarget:
    commits: list[tuple[Position, list[Outcome]]] = field(default_factory=list)

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(self.commits[-1][0] if self.commits else None, len(self.commits) - 1)

    def schema(self) -> Any:
        return None

    def commit(self, batch: ReadBatch, start: Position, end: Position, batch_id: str,
               outcomes: Sequence[Outcome], crash: Any = None) -> int:
        if crash:
            crash("written")
        if (self.checkpoint().position or Position(-1)) != start:
            raise CommitConflict("moved")
        self.commits.append((end, list(outcomes)))
        return len(self.commits) - 1

    def commit_position(self, start: Position | None, to: Position, reason: str, operation: str) -> int:
        self.commits.append((to, []))
        return len(self.commits) - 1

    def batches_after(self, version: int) -> list[tuple[int, str, list[Outcome]]]:
        return [(v, f"b{v}", c[1]) for v, c in enumerate(self.commits) if v > version]


@dataclass
class FakeLedger:
    rows: list[tuple[int, Outcome]] = field(default_factory=list)

    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]:
        refs = {o.obj.ref for _, o in self.rows if o.status in FINAL}
        return {o.ref for o in objs if o.ref in refs}

    def last_target_version(self) -> int:
        return max((v for v, _ in self.rows), default=-1)

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None:
        if target_version > self.last_target_version():
            self.rows += [(target_version, o) for o in outcomes]


def make(changelog: FakeChangelog, target: FakeTarget, ledger: FakeLedger, **kw: Any) -> Loader:
    store = FakeStore({k: 10 for k in "abcdefg"} | {"empty": 0})
    return Loader(changelog=changelog, store=store, reader=FakeReader, target=target, ledger=ledger,
                  caps=Caps(2, 10**6), **kw)


def loaded_rows(target: FakeTarget) -> Counter[str]:
    return Counter(o.obj.key for _, outs in target.commits for o in outs if o.status == "loaded" and o.rows)


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
