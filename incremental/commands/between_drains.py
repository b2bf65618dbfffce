"""What `run` does beside its batches: the catalog registration after each batch, and between
drains the periodic backfill, the source cleanup and the periodic compaction (each failure logged,
never the end of the run)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

from lakeinlet import logs
from lakeinlet.incremental.bounds import bounds_of
from lakeinlet.incremental.cleanup import Cleanup
from lakeinlet.incremental.commands import backfill as bf
from lakeinlet.incremental.commands import maintain as mt
from lakeinlet.incremental.commands.fanout import RouteRun
from lakeinlet.incremental.wiring import Parts

log = logging.getLogger(__name__)


def register(parts: Parts, route: str | None = None) -> None:
    """The table's catalog entry brought in step (--catalog), logged when it changed."""
    outcome = parts.register()
    if outcome and outcome != "unchanged":
        named: dict[str, Any] = {"route": route} if route else {}
        logs.event(log, "catalog", **named, catalog=parts.config.tables.catalog, outcome=outcome)


def clean_sources(clean: Cleanup | None, route: str | None = None,
                  stopped: Callable[[], bool] = lambda: False) -> None:
    """After a drain, with --after-load: one cleanup pass, logged; a failure is logged too (the
    loads go on, and the next pass resumes where this one stopped)."""
    if clean is None:
        return
    named: dict[str, Any] = {"route": route} if route else {}
    try:
        r = clean.run(stopped=stopped)
    except Exception as exc:
        logs.event(log, "cleanup failed", level=logging.WARNING, **named,
                   error=f"{type(exc).__name__}: {exc}"[:500])
        return
    logs.event(log, "cleanup", **named, archived=r.done["archived"], deleted=r.done["deleted"],
               skipped=sum(r.skipped.values()), waiting=r.waiting, left=r.left, failed=r.failed)


def clean_routes(cleans: Sequence[tuple[str, Cleanup | None]],
                 stopped: Callable[[], bool] = lambda: False) -> None:
    for name, clean in cleans:
        clean_sources(clean, name, stopped)


def backfill_routes(parts: Sequence[Parts], drains: int) -> None:
    """With --continuous and --backfill-every N: every N drains, each route's (or the table's)
    prefixes of --backfill-bucket are listed for objects no event announced, lakeinlet's own left
    out (a failure is logged: the next round lists again)."""
    run = parts[0].config.run if parts else None
    if run is None or not (run.backfill_every and run.backfill_bucket) or drains % run.backfill_every:
        return
    for p in parts:
        try:
            for prefix in p.config.plan.prefix or ("",):
                bf.backfill(p.store(), p.changelog, p.ledger, run.backfill_bucket, prefix,
                            own=bounds_of(p.config).own)
        except Exception as exc:  # the loads go on; the next periodic backfill lists again
            logs.event(log, "backfill failed", level=logging.WARNING, table=p.config.tables.table,
                       error=f"{type(exc).__name__}: {exc}"[:500])


def maintaining(parts: Sequence[Parts], runs: Sequence[RouteRun],
                then: Callable[[int], None]) -> Callable[[int], None]:
    """`then`, the hook run after each drain of the routes, followed by each route's (or the
    table's) compaction once it committed --maintain-every more batches."""
    periodic = [(run, mt.Every(p.config.run.maintain_every, functools.partial(mt.maintain, p),
                               p.config.tables.table or "", run.name or None))
                for p, run in zip(parts, runs, strict=False)]

    def after(drains: int) -> None:
        then(drains)
        for run, every in periodic:
            every.after(run.total.batches)

    return after


def after_drain(parts: Sequence[Parts], cleans: Sequence[tuple[str, Cleanup | None]],
                stopped: Callable[[], bool], drains: int) -> None:
    """After each drain of a --continuous run: the periodic backfill, then each table's cleanup pass."""
    backfill_routes(parts, drains)
    clean_routes(cleans, stopped)
