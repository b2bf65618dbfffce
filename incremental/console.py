"""What `lakeinlet-load run` prints and logs as it goes (batch lines, the run's summary), and the
stop a SIGTERM/SIGINT asks for."""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from lakeinlet import logs
from lakeinlet.incremental import batch_warnings
from lakeinlet.incremental.commands.fanout import Fanout
from lakeinlet.incremental.loader import BatchReport, Summary
from lakeinlet.logs import say

log = logging.getLogger(__name__)


class Stop:
    """A stop asked for by SIGTERM/SIGINT: the current batch finishes (a batch is atomic), a pause
    between drains ends at once."""

    def __init__(self) -> None:
        self.requested, self._idle = False, False

    def __call__(self) -> None:
        self.requested = True
        if self._idle:
            raise _StopNow

    def pause(self, seconds: float) -> None:
        if self.requested:
            return
        self._idle = True
        try:
            time.sleep(seconds)
        except _StopNow:
            pass
        finally:
            self._idle = False


class _StopNow(Exception):
    """Raised by the signal handler into a pause between drains."""


def progress(r: BatchReport, route: str | None = None) -> None:
    """After each committed batch: its log line, then the console's warnings on what it set aside."""
    batch_line(r, route)
    batch_warnings.warn(r.outcomes, r.set_aside())


def batch_line(r: BatchReport, route: str | None = None) -> None:
    p = r.plan
    timings: dict[str, Any] = {f"{k}_s": round(v, 3) for k, v in r.seconds.items()}
    named: dict[str, Any] = {"route": route} if route else {}
    logs.event(log, "batch", **named, batch=r.batch_id, files=len(p.to_read), rows=r.rows,
               removed_rows=r.removed_rows, replaced_rows=r.replaced_rows,
               bytes=p.bytes, changelog_from=str(p.start), changelog_to=str(p.end),
               versions=list(p.versions), events=p.events, skipped_known=p.skipped_known,
               superseded=p.superseded, target_version=r.target_version,
               **timings)


def table_summary(total: Summary, stopped: bool) -> None:
    """The end of a single table's run: the `summary` event and the one line it prints."""
    logs.event(log, "summary", batches=total.batches, rows=total.rows, conflicts=total.conflicts,
               skipped_known=total.skipped_known, stopped=stopped, **dict(total.statuses))
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(total.statuses.items()))
    removed = "".join(f" ({what.format(n)})" for what, n in (
        ("removed {} rows", total.removed_rows),
        ("deleted {} rows of objects' earlier versions", total.replaced_rows),
        ("kept {} malformed records in the quarantine table", total.malformed_records)) if n)
    say(f"loaded {total.rows} rows in {total.batches} batches{removed}"
        + (f"; {outcomes}" if outcomes else "") + ("; stopped on request" if stopped else ""))


def routes_summary(fan: Fanout, routes: int, rows: Any, stopped: bool) -> int:
    """The end of a run over routes: the `summary` event, a line per route and the totals; 3 when
    a route failed (each named on stderr), else 0."""
    total = fan.total()
    logs.event(log, "summary", routes=routes, batches=total.batches, rows=total.rows,
               failed_routes=[r.name for r in fan.failed()], changelog_reads=getattr(rows, "reads", None),
               stopped=stopped, **dict(total.statuses))
    for run in fan.runs:
        say(run.line())
    say(f"loaded {total.rows} rows into {routes} tables in {total.batches} batches; the changelog "
        f"read {getattr(rows, 'reads', 0)} times ({getattr(rows, 'versions_read', 0)} versions)"
        + ("; stopped on request" if stopped else ""))
    if fan.failed():
        say("error: routes failed: " + ", ".join(r.name for r in fan.failed()), file=sys.stderr)
        return 3
    return 0
