"""`run`: a single table and routes through one loop (a single table is a run of one route), with
one failure policy: a failed drain is retried after a growing pause for as long as the run goes."""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable, Sequence

from lakeinlet.incremental.cleanup import Cleanup
from lakeinlet.incremental.commands.between_drains import after_drain, clean_routes, maintaining, register
from lakeinlet.incremental.commands.fanout import Fanout, RouteRun
from lakeinlet.incremental.commands.watch import watching
from lakeinlet.incremental.console import Stop, progress, routes_summary, table_summary
from lakeinlet.incremental.routes import Route, selected, unrouted_config
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.unrouted import unrouted_run
from lakeinlet.incremental.wiring import Parts, build, build_cleanup, build_routes
from lakeinlet.signals import stop_on_signals

MAX_PAUSE = 300.0
"""Longest pause before retrying a failed drain (the pause doubles from --interval-seconds)."""


def cmd_run(parts: Parts, args: argparse.Namespace, stop: Stop | None = None,
            clock: Callable[[], float] = time.monotonic) -> int:
    """`run` without routes: the table as a run of one route; a failed drain the run ended on
    (a one-shot or --drain run's, or the last before a stop) is raised again: exit 2 or 1."""
    stop = stop or Stop()
    run = RouteRun("", parts.loader(), after_batch=functools.partial(register, parts))
    fan = loop(parts.config, [run], clock)
    go(fan, [parts], [("", build_cleanup(parts))], args, stop)
    if run.exc is not None:
        raise run.exc
    table_summary(fan.total(), stop.requested)
    return 0


def cmd_run_routes(config: LoaderConfig, every: list[Route], args: argparse.Namespace) -> int:
    """`run` with routes: every selected route, plus the record of unrouted objects."""
    routes = selected(every, config.routes.route)
    parts = build_routes(config, routes)
    record = build(unrouted_config(config))
    record.rows = parts[0].rows
    stop = Stop()
    try:
        runs = [RouteRun(r.name, p.loader(), after_batch=functools.partial(register, p, r.name))
                for r, p in zip(routes, parts, strict=True)]
        runs.append(unrouted_run(record, parts, every))
        cleans = [(r.name, build_cleanup(p)) for r, p in zip(routes, parts, strict=True)]
        fan = loop(config, runs)
        go(fan, parts, cleans, args, stop)
    finally:
        for p in [*parts, record]:
            p.close()
    return routes_summary(fan, len(routes), parts[0].rows, stop.requested)


def loop(config: LoaderConfig, runs: list[RouteRun], clock: Callable[[], float] = time.monotonic) -> Fanout:
    return Fanout(runs, progress, config.run.interval_seconds, MAX_PAUSE, config.run.max_batches,
                  clock=clock, threads=config.routes.route_threads)


def go(fan: Fanout, parts: Sequence[Parts], cleans: Sequence[tuple[str, Cleanup | None]],
       args: argparse.Namespace, stop: Stop) -> None:
    """Once, until caught up (--drain) or --continuous until stopped, with each table's cleanup
    after a drain and, with --continuous, the periodic backfill and compaction; every batch and
    drain beats the heartbeat and counts in the metrics (`watch`)."""
    def stopped() -> bool:
        return stop.requested

    with stop_on_signals(stop, "after the current batch"), \
            watching(parts[0].config.metrics, fan, parts) as watch:
        fan.progress = watch.progress(fan.progress)
        if args.continuous:
            after = functools.partial(after_drain, parts, cleans, stopped)
            fan.continuous(stopped, stop.pause, watch.after_drain(maintaining(parts, fan.runs, after)))
        else:
            fan.drain(stopped, once=not args.drain)
            clean_routes(cleans, stopped)
            watch.drained()
