"""`lakeinlet-load maintain` over fakes: the line per table, dry run, a missing table and a
compaction that kept losing are errors on that table, and --maintain-every in a --continuous run
(one table, and routes through the fan-out's after-drain hook)."""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest

from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental import job
from lakeinlet.incremental.commands import maintain as mt
from lakeinlet.incremental.commands import run as run_command
from lakeinlet.incremental.commands.between_drains import maintaining
from lakeinlet.incremental.commands.fanout import RouteRun
from lakeinlet.incremental.console import Stop
from lakeinlet.incremental.loader import Summary
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.settings import CleanupSection, LoaderConfig, RunSection, TablesSection
from tests.fakes import MemoryTarget

pytestmark = pytest.mark.unit
DONE = Compaction(120, 50 * mt.MIB, 3, 48 * mt.MIB, 118, 57, "2 files written")


@dataclass
class Recording:
    """A target whose `compact` answers from a script and records how it was called."""

    answers: list[Compaction | Exception]
    uri: str = "s3://lake/orders"
    calls: list[tuple[int, float, bool]] = field(default_factory=list)

    def schema(self) -> Any:
        return object()

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        self.calls.append((target_file_bytes, retention_hours, dry_run))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def parts_of(target: Any, mb: int = 64, every: int = 0) -> Any:
    tables = TablesSection(changelog="c", table=target.uri, target_file_mb=mb)
    config = LoaderConfig(tables=tables, run=RunSection(maintain_every=every))
    repairs: list[int] = []
    loader = SimpleNamespace(repair=lambda: repairs.append(1) or 0)
    return SimpleNamespace(target=target, config=config, loader=lambda: loader, repairs=repairs)


def args(dry_run: bool = False, hours: float = 168.0) -> argparse.Namespace:
    return argparse.Namespace(dry_run=dry_run, retention_hours=hours)


def test_the_line_says_files_and_bytes_before_and_after_and_the_commit() -> None:
    assert mt.line("s3://lake/orders", DONE, dry_run=False) == (
        "s3://lake/orders: files 120 → 3, bytes 52428800 → 50331648 (50.0 MiB → 48.0 MiB), "
        "rewrote 118 files in version 57; 2 files written")
    planned = Compaction(120, 100, 3, 100, 118)
    assert mt.line("t", planned, dry_run=True) == (
        "t: files 120 → ~3, bytes 100 → ~100 (100 B → ~100 B), would rewrite 118 files")
    assert mt.line("t", Compaction(1, 10, 1, 10, 0, None, "nothing small"), dry_run=False).endswith(
        "nothing rewritten; nothing small")


def test_the_command_compacts_to_the_tables_file_size(capsys: pytest.CaptureFixture[str]) -> None:
    target = Recording([DONE])
    parts = parts_of(target, mb=64)
    assert mt.cmd_maintain(parts, args(hours=24)) == 0
    assert target.calls == [(64 * mt.MIB, 24, False)]
    assert parts.repairs == [1]  # the ledger holds every commit before any history is expired
    assert capsys.readouterr().out == mt.line(target.uri, DONE, False) + "\n"


def test_a_dry_run_says_nothing_changed(capsys: pytest.CaptureFixture[str]) -> None:
    target = Recording([Compaction(4, 40, 1, 40, 4)])
    parts = parts_of(target)
    assert mt.cmd_maintain(parts, args(dry_run=True)) == 0
    assert target.calls[0][2] is True and parts.repairs == []
    assert capsys.readouterr().out.splitlines()[-1] == "dry run: nothing changed"


def test_a_table_not_there_yet_is_an_error_on_that_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert mt.cmd_maintain(parts_of(MemoryTarget()), args()) == 2
    assert "error: --table memory://orders: no table there yet, nothing to compact" in capsys.readouterr().err


def test_a_compaction_that_kept_losing_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    target = Recording([CommitConflict("compaction of t lost 4 commit races")])
    assert mt.cmd_maintain(parts_of(target), args()) == 2
    assert "error: compaction of t lost 4 commit races" in capsys.readouterr().err


def test_a_retention_under_an_hour_is_refused() -> None:
    with pytest.raises(TerminalError, match="at least 1 hour"):
        mt.cmd_maintain(parts_of(Recording([DONE])), args(hours=0.5))


def test_the_command_line_parses_maintain() -> None:
    ns = job.build_parser().parse_args(["maintain", "--table", "t", "--changelog", "c", "--dry-run",
                                        "--target-file-mb", "32", "--master", "local[1]"])
    assert (ns.command, ns.dry_run, ns.retention_hours) == ("maintain", True, mt.RETENTION_HOURS)
    assert job.COMMANDS["maintain"] is mt.cmd_maintain


def test_the_memory_target_compacts_without_moving_the_checkpoint() -> None:
    target = MemoryTarget(table=[])
    for n in range(3):
        target._commit({"operation": "load", "app_id": target.app_id, "start": Position(n - 1).to_json(),
                        "position": Position(n).to_json(), "batch": f"b{n}", "outcomes": "[]"})
    batches = target.batches_after(-1)
    done = target.compact(mt.MIB, 168, dry_run=False)
    assert (done.files_before, done.files_after, done.version) == (3, 1, 3)
    assert target.checkpoint().position == Position(2) and target.batches_after(-1) == batches


def test_every_n_batches_compacts_once_n_more_are_committed(caplog: pytest.LogCaptureFixture) -> None:
    target = Recording([DONE, RuntimeError("disk full"), DONE])
    every = mt.Every(3, lambda: mt.maintain(parts_of(target)), target.uri)
    caplog.set_level(logging.INFO, "lakeinlet")
    done = [every.after(n) for n in (1, 2, 3, 5, 6, 8, 9)]
    assert [d is not None for d in done] == [False, False, True, False, False, False, True]
    assert len(target.calls) == 3  # the failure at 6 was logged; the next came 3 batches later
    assert [r.getMessage() for r in caplog.records] == ["maintain", "maintain failed", "maintain"]
    assert mt.Every(0, lambda: DONE, "t").after(100) is None


class Drains:
    def __init__(self, batches: list[int], stop: Stop) -> None:
        self.batches, self.stop = iter(batches), stop

    def drain(self, **_: Any) -> Summary:
        n = next(self.batches, None)
        if n is None:  # the end of the script
            self.stop.requested = True
            return Summary()
        return Summary(batches=n)

    def repair(self) -> int:
        return 0


def test_a_continuous_run_compacts_every_n_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "sleep", lambda _: None)
    target = Recording([DONE, DONE])
    parts = parts_of(target, every=4)
    parts.config = LoaderConfig(tables=parts.config.tables, run=RunSection(maintain_every=4),
                                cleanup=CleanupSection())
    stop = Stop()
    drains = Drains([2, 1, 0, 3, 2, 1, 1], stop)
    run = SimpleNamespace(**(vars(parts) | {"loader": lambda: drains}), register=lambda: None)
    run_command.cmd_run(cast(Any, run), argparse.Namespace(drain=False, continuous=True), stop)
    assert len(target.calls) == 2  # after 6 batches (2+1+0+3), then after 10 (… +2+1+1)


def test_routes_compact_after_a_drain_once_they_committed_n_more_batches() -> None:
    targets = [Recording([DONE]), Recording([DONE], uri="s3://lake/other")]
    parts = [parts_of(t, every=2) for t in targets]
    runs = [RouteRun("a", cast(Any, None)), RouteRun("b", cast(Any, None))]
    drains: list[int] = []
    after = maintaining(cast(Any, parts), runs, drains.append)
    runs[0].total.batches, runs[1].total.batches = 2, 1
    after(1)
    runs[1].total.batches = 2
    after(2)
    assert drains == [1, 2] and [len(t.calls) for t in targets] == [1, 1]
