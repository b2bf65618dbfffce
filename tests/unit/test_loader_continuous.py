"""`lakeinlet-load run --continuous` outlives a failed drain (a connection cut mid-body, a
throttled store): it pauses, doubling from --interval-seconds, and retries; it stops after
MAX_FAILED_DRAINS failures in a row, and at once on a terminal error."""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from lakeinlet.errors import TerminalError
from lakeinlet.incremental import job
from lakeinlet.incremental.loader import Summary
from lakeinlet.incremental.settings import CleanupSection, TablesSection

pytestmark = pytest.mark.unit


class Drains:
    """A loader whose drains follow a script: an exception is raised, a Summary returned."""

    def __init__(self, script: list[Any]) -> None:
        self.script: Iterator[Any] = iter(script)
        self.calls = 0

    def drain(self, **_: Any) -> Summary:
        self.calls += 1
        step = next(self.script)
        if isinstance(step, BaseException):
            raise step
        return step


def run(loader: Drains, pauses: list[float], monkeypatch: pytest.MonkeyPatch, interval: float = 10.0,
        continuous: bool = True) -> None:
    """cmd_run over `loader`, noting the pauses it takes in `pauses`."""
    monkeypatch.setattr(job.time, "sleep", pauses.append)
    run_cfg = SimpleNamespace(max_batches=0, backfill_every=0, backfill_bucket=None,
                              interval_seconds=interval, maintain_every=0)
    parts = SimpleNamespace(config=SimpleNamespace(run=run_cfg, cleanup=CleanupSection(),
                                                   tables=TablesSection()),
                            loader=lambda: loader, register=lambda: None)
    job.cmd_run(parts, argparse.Namespace(drain=not continuous, continuous=continuous))  # type: ignore[arg-type]


def test_pauses_double_and_reset_after_a_good_drain(monkeypatch: pytest.MonkeyPatch) -> None:
    loader, pauses = Drains([OSError("a"), OSError("b"), Summary(batches=1, rows=3), OSError("c"),
                             TerminalError("stop")]), []
    with pytest.raises(TerminalError):  # a terminal error ends the run at once
        run(loader, pauses, monkeypatch)
    assert pauses == [10.0, 20.0, 10.0, 10.0]
    assert loader.calls == 5


def test_the_run_stops_after_too_many_failures_in_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    loader = Drains([OSError(f"cut {i}") for i in range(job.MAX_FAILED_DRAINS + 1)])
    with pytest.raises(OSError, match=f"cut {job.MAX_FAILED_DRAINS - 1}"):
        run(loader, pauses, monkeypatch, interval=100.0)
    assert loader.calls == job.MAX_FAILED_DRAINS
    assert pauses == [100.0, 200.0, job.MAX_PAUSE, job.MAX_PAUSE]


def test_without_continuous_a_failure_is_the_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    loader, pauses = Drains([OSError("cut"), Summary()]), []
    with pytest.raises(OSError):
        run(loader, pauses, monkeypatch, continuous=False)
    assert loader.calls == 1 and pauses == []


def test_a_signal_during_a_drain_stops_the_run_after_it(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    class Signalled(Drains):
        def drain(self, **kw: Any) -> Summary:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the batch runs
            assert kw["stopped"]()  # the loader is told between its batches
            return super().drain(**kw)

    loader, pauses = Signalled([Summary(batches=1, rows=3), Summary(batches=1, rows=3)]), []
    run(loader, pauses, monkeypatch)
    assert loader.calls == 1 and pauses == []
    assert "loaded 3 rows in 1 batches; stopped on request" in capsys.readouterr().out


def test_a_signal_during_a_pause_ends_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loader, pauses = Drains([Summary(batches=1), Summary(batches=1)]), []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: no KeyboardInterrupt traceback
        time.sleep(5)  # never reached in full: the handler ends the pause

    monkeypatch.setattr(job.time, "sleep", sleep)
    started = time.monotonic()
    run_cfg = SimpleNamespace(max_batches=0, backfill_every=0, backfill_bucket=None, interval_seconds=30,
                              maintain_every=0)
    parts = SimpleNamespace(config=SimpleNamespace(run=run_cfg, cleanup=CleanupSection(),
                                                   tables=TablesSection()),
                            loader=lambda: loader, register=lambda: None)
    assert job.cmd_run(parts, argparse.Namespace(drain=False, continuous=True)) == 0  # type: ignore[arg-type]
    assert loader.calls == 1 and pauses == [30] and time.monotonic() - started < 4
