"""Checkpoint show/reset and ledger repair on local Delta tables (delta-rs only, no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.loader import Loader
from lakeinlet.incremental.model import Outcome, PlannedObject, Position
from lakeinlet.incremental.plan import Caps
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from tests.targets import commit

pytestmark = pytest.mark.unit
AWS = AwsSection()
NOW = datetime(2026, 11, 22, tzinfo=UTC)


def _changelog(tmp: Path, commits: int) -> DeltaChangelog:
    cl = DeltaChangelog(str(tmp / "changelog"))
    for v in range(commits):
        ev = ObjectEvent("b", f"k{v}", "ObjectCreated:Put", NOW, 10, f"e{v}")
        cl.append([ReceivedEvent(ev, f"m{v}", NOW, f"p{v}")] * 2, {"poll_batch": f"p{v}"})
    return cl


def _outcome(key: str) -> Outcome:
    return Outcome(PlannedObject("b", key, "e", None, 10, f"id-{key}", NOW, 0), "loaded", "", 3)


def _load(target: DeltaTarget, start: Position, end: Position, key: str) -> int:
    return commit(target, NOTHING_READ, start, end, f"batch-{key}", [_outcome(key)])[0]


def test_show_reports_checkpoint_and_lag(tmp_path: Path) -> None:
    cl = _changelog(tmp_path, 4)
    target = DeltaTarget(str(tmp_path / "t"), AWS, "app")
    assert ck.show(target, cl).checkpoint.position is None
    _load(target, Position(-1), Position(1), "k0")
    view = ck.show(target, cl, now=datetime.now(UTC) + timedelta(seconds=60))
    assert (view.head, view.lag_versions, view.lag_events) == (3, 2, 4)
    assert [c.version for c in view.pending] == [2, 3] and view.lag_seconds >= 59
    assert target.table().transaction_version("app") == 1  # type: ignore[union-attr]


def test_reset_back_and_forward_is_audited_and_applied_once(tmp_path: Path) -> None:
    cl = _changelog(tmp_path, 5)
    target = DeltaTarget(str(tmp_path / "t"), AWS, "app")
    _load(target, Position(-1), Position(2), "k0")
    back = ck.plan_reset(target, cl, ck.resolve(cl, 1, None), "replay")
    assert [c.version for c in back.reread] == [1, 2] and not back.skipped
    version = ck.apply_reset(target, back, "replay")
    assert version is not None and target.checkpoint().position == Position(0)
    again = ck.plan_reset(target, cl, ck.resolve(cl, 1, None), "replay")
    assert again.already_applied == version and ck.apply_reset(target, again, "replay") is None
    fwd = ck.plan_reset(target, cl, Position(4), "skip")
    assert [c.version for c in fwd.skipped] == [1, 2, 3, 4]
    ck.apply_reset(target, fwd, "skip")
    assert target.checkpoint().position == Position(4)
    reasons = [c.meta["reason"] for c in target.commits() if "reason" in c.meta]
    assert reasons == ["skip", "replay"]


def test_ledger_is_repaired_from_the_target_commit_metadata(tmp_path: Path) -> None:
    target = DeltaTarget(str(tmp_path / "t"), AWS, "app")
    ledger = DeltaLedger(str(tmp_path / "ledger"), AWS, "app")
    v0 = _load(target, Position(-1), Position(0), "a")
    ledger.append([_outcome("a")], v0, "batch-a")
    _load(target, Position(0), Position(1), "b")  # crash: ledger never written for this batch
    loader = Loader(changelog=None, store=None, reader=None, target=target, ledger=ledger,  # type: ignore[arg-type]
                    caps=Caps(1, 1))
    assert loader.repair() == 1
    assert loader.repair() == 0
    assert sorted(r["key"] for r in ledger.read().to_pylist()) == ["a", "b"]
    assert ledger.known([_outcome("b").obj]) == {_outcome("b").obj.ref}


def test_commit_from_a_stale_checkpoint_is_a_conflict(tmp_path: Path) -> None:
    from lakeinlet.errors import CommitConflict

    target = DeltaTarget(str(tmp_path / "t"), AWS, "app")
    _load(target, Position(-1), Position(0), "a")
    with pytest.raises(CommitConflict, match="another loader"):
        _load(target, Position(-1), Position(0), "a")


def test_reset_refuses_versions_outside_the_changelog_and_to_latest_skips_on_purpose(tmp_path: Path) -> None:
    from lakeinlet.errors import TerminalError

    cl = _changelog(tmp_path, 3)  # versions 0..2
    for bad in (3, 19, -1, -6):
        with pytest.raises(TerminalError, match=r"the changelog holds versions 0\.\.2"):
            ck.resolve(cl, bad, None)
    with pytest.raises(TerminalError, match="in the future"):
        ck.resolve(cl, None, datetime.now(UTC) + timedelta(days=1))
    assert ck.resolve(cl, 0, None) == Position(-1) and ck.resolve(cl, 2, None) == Position(1)
    assert ck.resolve(cl, None, None, to_latest=True) == Position(2)


def test_a_reset_commits_while_holding_what_a_writer_of_the_table_holds(tmp_path: Path) -> None:
    """Hudi's writer lease is the run's hold: `lakeinlet-load checkpoint reset` passes it, so a
    reset never lands beside another process's load."""
    from lakeinlet.incremental.job import main
    from lakeinlet.incremental.settings import LoaderConfig, TablesSection
    from lakeinlet.incremental.targets import build_target
    from lakeinlet.incremental.targets.hudi.lease import LeaseHeld, LocalLease

    table = str(tmp_path / "hudi")
    built = build_target(LoaderConfig(tables=TablesSection(changelog="", table=table, target_format="hudi")),
                         lambda: None)
    with built.hold(), pytest.raises(LeaseHeld):
        LocalLease(table + ".lakeinlet-writer.lock").acquire(0)
    cl = _changelog(tmp_path, 2)
    other = LocalLease(table + ".lakeinlet-writer.lock")
    other.acquire(0)  # another process is loading: the reset must wait for it, not commit beside it
    try:
        code = main(["checkpoint", "reset", "--to-version", "0", "--changelog", cl.uri, "--table", table,
                     "--target-format", "hudi", "--lease-wait-seconds", "0"])
    finally:
        other.release()
    assert code == 2, "a reset committed while another process held the table's writer lease"


def test_a_ledger_record_that_loses_to_an_earlier_versions_record_is_written_after_it(tmp_path: Path) -> None:
    """maintain's repair records version 2 between the loader's read of the ledger and its
    commit of version 3: the loader's commit loses the txn race and must try again, not fail."""
    uri = str(tmp_path / "ledger")
    loader, repair = DeltaLedger(uri, AWS, "app"), DeltaLedger(uri, AWS, "app")
    loader.append([_outcome("k1")], 1, "b1")
    latest = loader._latest
    stale = latest.current

    def current_after_repair():  # type: ignore[no-untyped-def]
        latest.current = stale  # type: ignore[method-assign]
        repair.append([_outcome("k2")], 2, "b2")
        return stale()

    latest.current = current_after_repair  # type: ignore[method-assign]
    loader.append([_outcome("k3")], 3, "b3")
    assert loader.last_target_version() == 3
    rows = loader.read(["key", "target_version"]).to_pylist()
    assert sorted((r["key"], r["target_version"]) for r in rows) == [("k1", 1), ("k2", 2), ("k3", 3)]
