"""Two loaders on one table and the ledger: a batch is planned against a ledger that knows every
target commit up to the checkpoint it starts from, whoever made that commit.

Regression tests for a duplicate found while building the chaos campaign: the ledger (the only
memory of which object versions were loaded) is appended after the target commit, by the loader
that committed. Another loader that planned in between (it lost the commit race, or simply
planned next) did not see those objects in the ledger and loaded a duplicate notification of one
of them again; and if the committer died before its ledger append, the other loader's own append
moved the ledger's version past that commit, so `repair` never recorded it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.fakes import FakeChangelog, FakeLedger, MemoryTarget, loaded_rows, make
from tests.targets import Crash, crashing

pytestmark = pytest.mark.unit


def two_batches() -> tuple[FakeChangelog, MemoryTarget, FakeLedger]:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    changelog.add("c", "a")  # "a" again: a redelivered message or a duplicate notification
    return changelog, target, ledger


def test_the_race_loser_does_not_reload_what_a_winner_that_died_before_its_ledger_append_loaded() -> None:
    changelog, target, ledger = two_batches()
    winner = crashing(make(changelog, target, ledger), "committed")
    loser = make(changelog, target, ledger)
    real_publish = target.publish

    def winner_commits_first(*args: Any, **kw: Any) -> int:
        target.publish = real_publish  # type: ignore[method-assign]
        with pytest.raises(Crash):
            winner.run_batch()  # commits a and b, then dies before its ledger append
        return real_publish(*args, **kw)  # the loser's commit of the same batch: a conflict

    target.publish = winner_commits_first  # type: ignore[method-assign]
    summary = loser.drain()
    make(changelog, target, ledger).drain()
    assert summary.conflicts == 1
    assert loaded_rows(target) == {"a": 1, "b": 1, "c": 1}
    assert Counter(o.obj.key for _, o in ledger.rows if o.status == "loaded") == {"a": 1, "b": 1, "c": 1}


def test_a_batch_planned_between_anothers_commit_and_its_ledger_append_skips_its_objects() -> None:
    changelog, target, ledger = two_batches()
    first, second = make(changelog, target, ledger), make(changelog, target, ledger)
    real_append = ledger.append

    def second_plans_before_the_append(*args: Any, **kw: Any) -> None:
        ledger.append = real_append  # type: ignore[method-assign]
        second.run_batch()  # starts from first's checkpoint while first's ledger rows are not there
        real_append(*args, **kw)

    ledger.append = second_plans_before_the_append  # type: ignore[method-assign]
    first.run_batch()
    assert loaded_rows(target) == {"a": 1, "b": 1, "c": 1}
    assert Counter(o.obj.key for _, o in ledger.rows if o.status == "loaded") == {"a": 1, "b": 1, "c": 1}
