"""Changelog positions as users read them (docs/concepts/positions.md): `3`, `4@8`, `start`; and as
numbers where a machine reads them (`checkpoint show --json`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.job import main
from lakeinlet.incremental.model import Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from tests.targets import commit

pytestmark = pytest.mark.unit
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize(("position", "shown"), [
    (Position(3), "3"),
    (Position(0), "0"),
    (Position(3, 8), "4@8"),  # versions through 3, and the first 8 rows of version 4
    (Position(-1, 8), "0@8"),  # the trial's `-1+8`
    (Position(-1), "start"),
])
def test_a_position_reads_as_the_version_it_is_in(position: Position, shown: str) -> None:
    assert str(position) == shown
    assert position.fields() == {"complete": position.complete, "offset": position.offset}


def _lake(tmp_path: Path) -> tuple[DeltaChangelog, DeltaTarget, list[str]]:
    """A changelog of two versions (two rows each) and a target that consumed one row of version 0."""
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    for v in range(2):
        ev = ObjectEvent("b", f"k{v}", "ObjectCreated:Put", NOW, 10, f"e{v}")
        cl.append([ReceivedEvent(ev, f"m{v}", NOW, f"p{v}")] * 2, {"poll_batch": f"p{v}"})
    target = DeltaTarget(str(tmp_path / "orders"), AwsSection(), "lakeinlet-loader")
    obj = PlannedObject("b", "k0", "e", None, 10, "e0", NOW, 0)
    commit(target, NOTHING_READ, Position(-1), Position(-1, 1), "batch-1", [Outcome(obj, "loaded", "", 3)])
    return cl, target, ["--changelog", cl.uri, "--table", target.uri]


def test_checkpoint_show_prints_the_position_and_its_numbers(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    _, _, flags = _lake(tmp_path)
    assert main(["checkpoint", "show", *flags]) == 0
    assert capsys.readouterr().out.startswith("checkpoint: 0@1 (target version")
    assert main(["checkpoint", "show", "--json", *flags]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["checkpoint"], shown["complete"], shown["offset"]) == ("0@1", -1, 1)


def test_checkpoint_show_json_of_a_table_never_loaded_has_no_numbers(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cl, _, _ = _lake(tmp_path)
    fresh = ["--changelog", cl.uri, "--table", str(tmp_path / "fresh")]
    assert main(["checkpoint", "show", "--json", *fresh]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["checkpoint"], shown["complete"], shown["offset"]) == (None, None, None)


def test_a_reset_plan_names_both_positions(tmp_path: Path) -> None:
    cl, target, _ = _lake(tmp_path)
    plan = ck.plan_reset(target, cl, ck.resolve(cl, 0, None), "again")
    assert plan.lines()[0] == "reset checkpoint 0@1 → start"
    forward = ck.plan_reset(target, cl, ck.resolve(cl, None, None, to_latest=True), "skip")
    assert forward.lines()[0] == "reset checkpoint 0@1 → 1"
