"""`checkpoint reset --dry-run` lists every version the reset moves over, with the events each
one really holds, or says which it cannot read (delta-rs only, no Spark)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.model import Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from tests.targets import commit

pytestmark = pytest.mark.unit
NOW = datetime(2026, 11, 22, tzinfo=UTC)


def _append(cl: DeltaChangelog, version: int, events: int) -> None:
    rows = [ReceivedEvent(ObjectEvent("b", f"k{version}-{i}", "ObjectCreated:Put", NOW, 10,
                                      f"e{version}-{i}"), f"m{version}-{i}", NOW, f"p{version}")
            for i in range(events)]
    assert cl.append(rows, {"poll_batch": f"p{version}"}) == version


def _loaded_to(tmp: Path, complete: int) -> DeltaTarget:
    target = DeltaTarget(str(tmp / "t"), AwsSection(), "app")
    obj = PlannedObject("b", "k", "e", None, 10, "id-k", NOW, 0)
    commit(target, NOTHING_READ, Position(-1), Position(complete), "batch", [Outcome(obj, "loaded", "", 1)])
    return target


def test_a_commit_landing_during_the_dry_run_does_not_shift_its_versions(tmp_path: Path) -> None:
    """The README's sequence (one poll batch, loaded, reset to version 0) while a poller commits
    the next version between the moment the changelog is opened and its log is listed."""
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    _append(cl, 0, 4)
    target = _loaded_to(tmp_path, 0)
    to = ck.resolve(cl, 0, None)
    opened = cl.table()
    assert opened is not None and opened.version() == 0
    _append(DeltaChangelog(cl.uri), 1, 1)  # another process: the dry run's open table does not see it
    cl.table = lambda version=None: opened if version is None else DeltaTable(cl.uri, version=version)  # type: ignore[method-assign]

    plan = ck.plan_reset(target, cl, to, "replay")

    assert [(c.version, c.rows, c.metadata["poll_batch"]) for c in plan.reread] == [(0, 4, "p0")]
    assert plan.lines()[1:] == ["  re-read version 0 (4 events; objects already loaded are skipped)"]


def test_versions_whose_commit_file_is_gone_are_named_not_dropped(tmp_path: Path) -> None:
    """Log cleanup (delta-rs removes commit files older than the log retention once a log
    checkpoint covers them) leaves versions no history lists: the dry run still names them."""
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    for v in range(4):
        _append(cl, v, v + 1)
    DeltaTable(cl.uri).create_checkpoint()
    for v in (0, 1):
        (tmp_path / "changelog" / "_delta_log" / f"{v:020d}.json").unlink()
    target = _loaded_to(tmp_path, 3)

    reader = DeltaChangelog(cl.uri)  # a new process: nothing of the writer's open table
    plan = ck.plan_reset(target, reader, ck.resolve(reader, 0, None), "replay")

    lines = plan.lines()
    assert [ln.split(" (")[0].strip() for ln in lines[1:5]] == [f"re-read version {v}" for v in range(4)]
    assert "events unknown" in lines[1] and "events unknown" in lines[2]
    assert "2 of these versions have no readable commit" in lines[5]
    assert [(c.version, c.rows) for c in plan.reread] == [(2, 3), (3, 4)] and plan.unreadable == (0, 1)


def test_skipping_forward_names_every_skipped_version(tmp_path: Path) -> None:
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    for v in range(3):
        _append(cl, v, v + 1)
    target = _loaded_to(tmp_path, 0)
    plan = ck.plan_reset(target, cl, ck.resolve(cl, None, None, to_latest=True), "skip")
    assert [(c.version, c.rows) for c in plan.skipped] == [(1, 2), (2, 3)] and not plan.reread
    assert plan.lines()[1:] == ["  SKIP version 1 (2 events will not be loaded)",
                                "  SKIP version 2 (3 events will not be loaded)"]


def test_to_time_resolves_against_versions_read_by_file_name(tmp_path: Path) -> None:
    """`--to-time` between versions 0 and 1 while a poller commits version 1 after the changelog
    was opened: version 0, not -1 (history would label version 1's commit as 0)."""
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    _append(cl, 0, 2)
    opened = cl.table()
    assert opened is not None
    between = datetime.now(UTC)
    time.sleep(0.01)
    _append(DeltaChangelog(cl.uri), 1, 1)
    cl.table = lambda version=None: opened if version is None else DeltaTable(cl.uri, version=version)  # type: ignore[method-assign]
    assert cl.version_at(between) == 0
