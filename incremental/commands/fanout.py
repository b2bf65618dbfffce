"""`run`'s one loop: one batch per route in turn, so routes read the same changelog versions while
they are cached; a failing route is reported and retried later without blocking the others. A single
table is a run of one route (named "": its lines name no route), whose drain is one loader call."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lakeinlet import logs
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.loader import BatchReport, Loader, Summary

log = logging.getLogger(__name__)
UNROUTED = "(unrouted)"
"""The name of the run that records objects no route selects (no route can have it)."""


@dataclass
class RouteRun:
    """One route's loader and how its run goes."""

    name: str
    loader: Loader
    total: Summary = field(default_factory=Summary)
    failures: int = 0
    error: str | None = None
    exc: Exception | None = None
    """The failure `error` describes (a single table's run raises it again at its end)."""
    retry_at: float = 0.0
    caught_up: bool = False
    in_drain: int = 0
    """Batches in the current drain (--max-batches caps each drain, as with one table)."""
    after_batch: Callable[[], None] | None = None
    """Called after each committed batch, and after the route's first drain (the catalog
    registration, which repairs one a crash left behind)."""
    synced: bool = False

    def line(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.total.statuses.items()))
        state = f"failed: {self.error}" if self.error else "ok"
        if self.name == UNROUTED:
            return (f"unrouted: {self.total.statuses.get('unrouted', 0)} objects no route selects, "
                    f"recorded in the unrouted ledger; {state}")
        return (f"route {self.name}: loaded {self.total.rows} rows in {self.total.batches} batches"
                + (f"; {outcomes}" if outcomes else "") + f"; {state}")


@dataclass
class Fanout:
    """Runs batches of every route until the mode says stop."""

    runs: list[RouteRun]
    progress: Callable[[BatchReport, str], None]
    interval: float
    max_pause: float
    max_batches: int = 0
    clock: Callable[[], float] = time.monotonic
    threads: int = 1
    """Routes whose batches run at once (Spark runs their jobs side by side in one session)."""

    def round(self, stopped: Callable[[], bool], retry: bool, once: bool = False) -> None:
        """One batch of each route that is due (not caught up, not failed or waiting to retry),
        `threads` routes at a time."""
        due = [r for r in self.runs if not self._idle(r)
               and not (r.error and (not retry or self.clock() < r.retry_at))]
        if self.threads <= 1:
            for run in due:
                if stopped():
                    return
                self._batch(run, stopped, once)
            return
        def one(run: RouteRun) -> None:
            if not stopped():
                self._batch(run, stopped, once)

        with ThreadPoolExecutor(self.threads, thread_name_prefix="route") as pool:
            list(pool.map(one, due))

    def _batch(self, run: RouteRun, stopped: Callable[[], bool], once: bool) -> None:
        ask = self._ask(run, once)
        hook: list[Exception] = []  # a failed `after_batch` ends the drain after its batch
        def each(report: BatchReport) -> None:
            self.progress(report, run.name)
            self._after(run, hook)

        def halt() -> bool:
            return bool(hook) or stopped()

        try:
            summary = run.loader.drain(max_batches=ask, progress=each, stopped=halt)
            run.total.add(summary)  # committed: counted even if `after_batch` fails
            run.in_drain += summary.batches
            run.caught_up = not ask or summary.batches < ask
            if not run.synced and not hook:
                self._after(run, hook)
            if hook:
                raise hook[0]
        except Exception as exc:  # one table's failure stops that route only
            self._failed(run, exc)
            return
        run.failures, run.error, run.exc = 0, None, None

    def _ask(self, run: RouteRun, once: bool) -> int:
        """Batches one loader call may run: one when routes take turns (or once), else the rest
        of the drain (0: until caught up)."""
        if once or len(self.runs) > 1:
            return 1
        return self.max_batches - run.in_drain if self.max_batches else 0

    @staticmethod
    def _after(run: RouteRun, hook: list[Exception]) -> None:
        if run.after_batch is None:
            return
        try:
            run.after_batch()
            run.synced = True
        except Exception as exc:
            hook.append(exc)

    def _failed(self, run: RouteRun, exc: Exception) -> None:
        """A failed drain: retried after a pause doubling from --interval-seconds up to max_pause,
        for as long as the run goes (logged as `route failed`, or `drain failed` for one table)."""
        run.failures += 1
        run.exc = exc
        run.error = str(exc) if isinstance(exc, TerminalError) else f"{type(exc).__name__}: {exc}"
        pause = min(self.max_pause, self.interval * 2 ** (run.failures - 1))
        run.retry_at = self.clock() + pause
        if run.name:
            logs.event(log, "route failed", level=logging.ERROR, route=run.name, error=run.error[:500],
                       failed_in_a_row=run.failures, retry_in_s=pause)
        else:
            logs.event(log, "drain failed", level=logging.WARNING, error=f"{type(exc).__name__}: {exc}",
                       failed_in_a_row=run.failures, retry_in_s=pause)

    def drain(self, stopped: Callable[[], bool], once: bool = False) -> None:
        """Rounds until every route is caught up, failed once, or at --max-batches (a route that
        failed in an earlier drain is tried again)."""
        self._start_drain()
        for run in self.runs:
            run.error, run.exc, run.retry_at = None, None, 0.0
        while not stopped():
            self.round(stopped, retry=False, once=once)
            if once or all(self._idle(r) or r.error for r in self.runs):
                return

    def continuous(self, stopped: Callable[[], bool], pause: Callable[[float], None],
                   after_drain: Callable[[int], None] = lambda _: None) -> None:
        """Drain, pause, repeat; a failed route is retried after its own growing pause.
        `after_drain(n)` runs after the n-th drain (the periodic backfill)."""
        drains = 0
        while not stopped():
            self._start_drain()
            while not stopped() and not all(self._idle(r) or self.clock() < r.retry_at for r in self.runs):
                self.round(stopped, retry=True)
            drains += 1
            after_drain(drains)
            waits = [r.retry_at - self.clock() for r in self.runs if r.error]
            pause(max(0.0, min([self.interval, *waits])))

    def _start_drain(self) -> None:
        for run in self.runs:
            run.caught_up, run.in_drain = False, 0

    def _idle(self, run: RouteRun) -> bool:
        return run.caught_up or bool(self.max_batches and run.in_drain >= self.max_batches)

    def total(self) -> Summary:
        out = Summary()
        for run in self.runs:
            out.add(run.total)
        return out

    def failed(self) -> list[RouteRun]:
        return [r for r in self.runs if r.error]
