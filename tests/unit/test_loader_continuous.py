"""`lakeinlet-load run --continuous` outlives failed drains (a connection cut mid-body, a throttled
store, a terminal error an operator fixes): each is retried after a pause doubling from
--interval-seconds up to MAX_PAUSE, for as long as the run goes, as a route's is; a one-shot run
exits on its failure, and so does a run stopped while its last drain had failed."""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Iterator
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import pytest

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.commands import run as run_command
from lakeinlet.incremental.loader import Summary
from lakeinlet.incremental.settings import LoaderConfig, RunSection
from tests.unit.ticking import Ticking

pytestmark = pytest.mark.unit


class Drains:
    """A loader whose drains follow a script: an exception is raised, a Summary returned; once
    the script is done, the run is asked to stop."""

    def __init__(self, script: list[Any], stop: Ticking | None = None) -> None:
        self.script: Iterator[Any] = iter(script)
        self.calls, self.times, self.stop = 0, list[float](), stop

    def drain(self, **_: Any) -> Summary:
        self.calls += 1
        if self.stop is not None:
            self.times.append(self.stop.now)
        step = next(self.script, None)
        if step is None and self.stop is not None:
            self.stop.requested = True
            return Summary()
        if isinstance(step, BaseException):
            raise step
        return step


def parts_of(loader: Drains, interval: float = 10.0) -> Any:
    return SimpleNamespace(config=LoaderConfig(run=RunSection(interval_seconds=interval)),
                           loader=lambda: loader, register=lambda: None)


def run(loader: Drains, stop: Ticking, interval: float = 10.0, continuous: bool = True) -> int:
    """cmd_run over `loader`, on the clock of `stop`."""
    return run_command.cmd_run(parts_of(loader, interval),
                               argparse.Namespace(drain=not continuous, continuous=continuous),
                               stop=stop, clock=stop.clock)


def test_pauses_double_and_reset_after_a_good_drain() -> None:
    stop = Ticking()
    loader = Drains([OSError("a"), OSError("b"), Summary(batches=1, rows=3), OSError("c"),
                     TerminalError("fixed meanwhile"), Summary(batches=1)], stop)
    assert run(loader, stop) == 0  # a terminal error in a drain is retried too, as a route's is
    # retries 10 s, then 20 s after a failure; a good drain resets the pause
    assert loader.times == [0.0, 10.0, 30.0, 40.0, 50.0, 70.0, 80.0]


def test_failed_drains_are_retried_for_as_long_as_the_run_goes(capsys: pytest.CaptureFixture[str]) -> None:
    stop = Ticking()
    loader = Drains([OSError(f"cut {i}") for i in range(8)] + [Summary(batches=1, rows=3)], stop)
    assert run(loader, stop, interval=100.0) == 0
    gaps = [b - a for a, b in pairwise(loader.times)]
    assert gaps[:8] == [100.0, 200.0, *[run_command.MAX_PAUSE] * 6]
    assert "loaded 3 rows in 1 batches; stopped on request" in capsys.readouterr().out


def test_a_run_stopped_while_its_drain_failed_exits_on_that_failure() -> None:
    stop = Ticking(pauses_allowed=1)
    loader = Drains([OSError("cut"), Summary()], stop)
    with pytest.raises(OSError, match="cut"):
        run(loader, stop)
    assert loader.calls == 1 and stop.pauses == [10.0]


def test_without_continuous_a_failure_is_the_exit() -> None:
    stop = Ticking()
    loader = Drains([OSError("cut"), Summary()])
    with pytest.raises(OSError):
        run(loader, stop, continuous=False)
    assert loader.calls == 1 and stop.pauses == []


def test_a_signal_during_a_drain_stops_the_run_after_it(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    class Signalled(Drains):
        def drain(self, **kw: Any) -> Summary:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while the batch runs
            assert kw["stopped"]()  # the loader is told between its batches
            return super().drain(**kw)

    pauses: list[float] = []
    monkeypatch.setattr(time, "sleep", pauses.append)
    loader = Signalled([Summary(batches=1, rows=3), Summary(batches=1, rows=3)])
    run_command.cmd_run(parts_of(loader), argparse.Namespace(drain=False, continuous=True))
    assert loader.calls == 1 and pauses == []
    assert "loaded 3 rows in 1 batches; stopped on request" in capsys.readouterr().out


def test_a_signal_during_a_pause_ends_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loader, pauses = Drains([Summary(batches=1), Summary(batches=1)]), []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: no KeyboardInterrupt traceback
        time.sleep(5)  # never reached in full: the handler ends the pause

    monkeypatch.setattr(time, "sleep", sleep)
    started = time.monotonic()
    args = argparse.Namespace(drain=False, continuous=True)
    assert run_command.cmd_run(parts_of(loader, interval=30), args) == 0
    assert loader.calls == 1 and pauses == [30] and time.monotonic() - started < 4
