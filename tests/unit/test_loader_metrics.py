"""The loader's metrics per route (batches, objects by status, conflicts, cleanup, maintain and
failure events) and its heartbeat in the one loop: a drain that hangs goes stale, an idle loop
keeps passing (a manual clock decides the ages; the test waits on the loop's passes)."""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from prometheus_client import CollectorRegistry

from lakeinlet import logs
from lakeinlet.health import Heartbeat
from lakeinlet.incremental.commands.fanout import Fanout, RouteRun
from lakeinlet.incremental.commands.watch import Watch
from lakeinlet.incremental.metrics import EventCounts, LoaderMetrics, counting
from lakeinlet.incremental.model import LoadPlan, Outcome, PlannedObject, Position
from lakeinlet.incremental.reports import BatchReport, Summary
from tests.unit.test_health import Clock

pytestmark = pytest.mark.unit
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def report(route_rows: int, size: int) -> BatchReport:
    objs = [PlannedObject("b", f"k{i}", None, None, size, f"e{i}", T0, 0) for i in range(3)]
    outcomes = (Outcome(objs[0], "loaded", rows=route_rows), Outcome(objs[1], "loaded", rows=route_rows),
                Outcome(objs[2], "corrupt", reason="not parquet"))
    return BatchReport("b1", LoadPlan(Position(-1), Position(0), tuple(objs)), 4, outcomes,
                       {"plan": 0.5, "read": 1.5, "total": 2.0})


def test_each_route_counts_its_batches_objects_and_events() -> None:
    registry = CollectorRegistry()
    runs = [RouteRun("orders", cast(Any, None)), RouteRun("clicks", cast(Any, None))]
    metrics = LoaderMetrics(registry, runs)
    metrics.batch(report(5, 100), "orders")
    runs[1].total.conflicts = 2
    said = logging.getLogger("lakeinlet.tests.loader_metrics")
    said.addHandler(EventCounts(metrics))
    said.setLevel(logging.INFO)
    logs.event(said, "cleanup", route="orders", archived=0, deleted=2, skipped=1, waiting=4, left=0, failed=0)
    logs.event(said, "maintain failed", route="clicks", table="t", error="boom")
    logs.event(said, "route failed", route="clicks", error="boom")
    logs.event(said, "drain failed", error="boom")  # a single table's: route ""

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert (value("lakeinlet_loader_rows_total", route="orders"), value("lakeinlet_loader_rows_total",
                                                                        route="clicks")) == (10, 0)
    assert value("lakeinlet_loader_objects_total", route="orders", status="loaded") == 2
    assert value("lakeinlet_loader_objects_total", route="orders", status="corrupt") == 1
    assert value("lakeinlet_loader_read_bytes_total", route="orders") == 300
    assert value("lakeinlet_loader_batch_seconds_sum", route="orders", step="read") == 1.5
    assert value("lakeinlet_loader_conflicts_total", route="clicks") == 2
    assert value("lakeinlet_loader_cleanup_objects_total", route="orders", outcome="deleted") == 2
    assert value("lakeinlet_loader_cleanup_passes_total", route="orders", result="ok") == 1
    assert value("lakeinlet_loader_maintain_total", route="clicks", result="failed") == 1
    assert value("lakeinlet_loader_maintain_total", route="orders", result="ok") == 0
    assert value("lakeinlet_loader_drain_failures_total", route="clicks") == 1
    assert value("lakeinlet_loader_drain_failures_total", route="") == 1


class Idle:
    """A loader with nothing to load."""

    def drain(self, max_batches: int = 0, **_: Any) -> Summary:
        return Summary()


def test_a_drain_that_hangs_goes_stale_while_an_idle_loop_keeps_passing() -> None:
    clock, stop, entered, gate = Clock(), threading.Event(), threading.Event(), threading.Event()

    def hang() -> None:  # the catalog registration after the first drain never returns
        entered.set()
        gate.wait(30)

    watches = []
    for run in (RouteRun("", cast(Any, Idle()), after_batch=hang), RouteRun("", cast(Any, Idle()))):
        fan = Fanout([run], lambda r, n: None, interval=0.01, max_pause=1.0)
        watches.append(Watch(Heartbeat(None, bound=5, idle_every=0, clock=clock), None, fan, []))
    threads = [threading.Thread(target=w.fan.continuous, daemon=True, args=(
        stop.is_set, stop.wait, w.after_drain(lambda n: None))) for w in watches]
    for t in threads:
        t.start()
    assert entered.wait(30)
    clock.now = 6.0
    stuck, idle = (w.heart for w in watches)
    deadline = time.monotonic() + 30  # bounded: a loop that never passes fails below, not hangs
    while idle.last < 6.0 and time.monotonic() < deadline:
        threading.Event().wait(0.02)
    assert (stuck.verdict().healthy, idle.verdict().healthy) == (False, True)
    stop.set()
    gate.set()
    for t in threads:
        t.join(30)


def test_events_are_counted_at_any_log_level_and_printed_only_at_theirs() -> None:
    """--log-level WARNING hides the INFO `cleanup` line, not its count."""
    registry, tree = CollectorRegistry(), logging.getLogger("lakeinlet")
    metrics = LoaderMetrics(registry, [RouteRun("", cast(Any, None))])
    printed: list[str] = []
    printer = logging.Handler()
    printer.emit = lambda record: printed.append(record.getMessage())  # type: ignore[method-assign]
    tree.addHandler(printer)
    level = tree.level
    tree.setLevel(logging.WARNING)
    try:
        said = logging.getLogger("lakeinlet.x")
        with counting(metrics):
            logs.event(said, "cleanup", archived=1, deleted=0, skipped=0, failed=0)
            logs.event(said, "cleanup failed", level=logging.WARNING, error="e")
        assert tree.level == logging.WARNING and printer.level == logging.NOTSET
    finally:
        tree.removeHandler(printer)
        tree.setLevel(level)
    assert printed == ["cleanup failed"]
    passes = registry.get_sample_value("lakeinlet_loader_cleanup_passes_total", {"route": "", "result": "ok"})
    assert passes == 1
