"""The loader's Prometheus metrics per route (a single table is route ""): each batch's report, the
positions measured after each drain, and the cleanup, maintain and failure events the run logs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Summary
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.commands.fanout import RouteRun
from lakeinlet.incremental.reports import BatchReport
from lakeinlet.incremental.wiring import Parts
from lakeinlet.logs import fields_of

CLEANUP_OUTCOMES = ("archived", "deleted", "skipped", "failed")
"""The `cleanup` event's object counts that `lakeinlet_loader_cleanup_objects_total` carries."""


class LoaderMetrics(Collector):
    """Counters fed by the batches and the run's events; gauges of the last measured positions."""

    def __init__(self, registry: CollectorRegistry, runs: Sequence[RouteRun]) -> None:
        self.runs, self.views, self._lock = runs, dict[str, ck.CheckpointView](), threading.Lock()
        def counter(name: str, text: str, *labels: str) -> Counter:
            return Counter(f"lakeinlet_loader_{name}", text, ["route", *labels], registry=registry)
        self.batches = counter("batches", "Batches committed")
        self.objects = counter("objects", "Objects planned, by the ledger status they got", "status")
        self.rows = counter("rows", "Rows loaded (removed rows are not counted)")
        self.bytes = counter("read_bytes", "Bytes of the source objects read")
        self.seconds = Summary("lakeinlet_loader_batch_seconds", "Time of each batch, by step (plan, "
                               "read, commit, ...; total)", ["route", "step"], registry=registry)
        self.failures = counter("drain_failures", "Drains that failed (retried after a pause)")
        self.cleanup = counter("cleanup_objects", "Source objects a cleanup pass handled, by outcome",
                               "outcome")
        self.passes = counter("cleanup_passes", "Cleanup passes, by result (ok, failed)", "result")
        self.maintain = counter("maintain", "Periodic compactions, by result (ok, failed)", "result")
        for run in runs:  # every series from the start, at 0: a rate() needs its first sample
            self._zeros(run.name)
        registry.register(self)

    def _zeros(self, route: str) -> None:
        self.batches.labels(route)
        self.rows.labels(route)
        self.bytes.labels(route)
        self.failures.labels(route)
        for result in ("ok", "failed"):
            self.passes.labels(route, result)
            self.maintain.labels(route, result)
        for outcome in CLEANUP_OUTCOMES:
            self.cleanup.labels(route, outcome)

    def batch(self, report: BatchReport, route: str | None) -> None:
        """Count one committed batch (the Fanout's progress hook)."""
        name = route or ""
        self.batches.labels(name).inc()
        self.rows.labels(name).inc(report.rows)
        self.bytes.labels(name).inc(report.plan.bytes)
        for outcome in report.outcomes:
            self.objects.labels(name, outcome.status).inc()
        for step, seconds in report.seconds.items():
            self.seconds.labels(name, step).observe(seconds)

    def measure(self, parts: Sequence[Parts], names: Sequence[str]) -> None:
        """Each route's checkpoint, lag and freshness now (a metadata read: after a drain)."""
        views = {name: ck.show(p.target, p.changelog) for p, name in zip(parts, names, strict=False)}
        with self._lock:
            self.views = views

    def collect(self) -> Iterator[Any]:
        with self._lock:
            views = dict(self.views)
        now = datetime.now(UTC)
        conflicts = CounterMetricFamily("lakeinlet_loader_conflicts", "Commits another writer won "
                                        "(each batch re-planned)", labels=["route"])
        for run in self.runs:
            conflicts.add_metric([run.name], run.total.conflicts)
        yield conflicts
        yield from _position_gauges(views, now)


def _position_gauges(views: dict[str, ck.CheckpointView], now: datetime) -> Iterator[GaugeMetricFamily]:
    gauges = {name: GaugeMetricFamily(f"lakeinlet_loader_{name}", text, labels=["route"]) for name, text in (
        ("lag_versions", "Changelog versions after the checkpoint, at the last drain's end"),
        ("lag_events", "Changelog events not loaded yet, at the last drain's end"),
        ("lag_bytes", "Bytes of the objects the pending versions announce, at the last drain's end"),
        ("changelog_head_version", "The changelog's newest version, at the last drain's end"),
        ("freshness_seconds", "Now − the newest S3 event time loaded into the target"))}
    for route, view in views.items():
        gauges["lag_versions"].add_metric([route], view.lag_versions)
        gauges["lag_events"].add_metric([route], view.lag_events)
        if view.lag_bytes is not None:  # a pending commit that does not record its bytes
            gauges["lag_bytes"].add_metric([route], view.lag_bytes)
        gauges["changelog_head_version"].add_metric([route], view.head)
        newest = view.watermark.event_time if view.watermark else None
        if newest is not None:
            gauges["freshness_seconds"].add_metric([route], (now - newest).total_seconds())
    yield from gauges.values()


class EventCounts(logging.Handler):
    """Counts the run's `cleanup`, `maintain` and failure events into `metrics` (those passes log
    their outcome once; counting the line keeps one record of it)."""

    def __init__(self, metrics: LoaderMetrics) -> None:
        super().__init__()
        self.metrics = metrics

    def emit(self, record: logging.LogRecord) -> None:
        name, fields = record.getMessage(), fields_of(record)
        route, m = str(fields.get("route", "")), self.metrics
        count: dict[str, Callable[[], None]] = {
            "cleanup": lambda: self._cleanup(route, fields),
            "cleanup failed": lambda: m.passes.labels(route, "failed").inc(),
            "maintain": lambda: m.maintain.labels(route, "ok").inc(),
            "maintain failed": lambda: m.maintain.labels(route, "failed").inc(),
            "route failed": lambda: m.failures.labels(route).inc(),
            "drain failed": lambda: m.failures.labels(route).inc()}
        if name in count:
            count[name]()

    def _cleanup(self, route: str, fields: dict[str, Any]) -> None:
        self.metrics.passes.labels(route, "ok").inc()
        for outcome in CLEANUP_OUTCOMES:
            self.metrics.cleanup.labels(route, outcome).inc(int(fields.get(outcome) or 0))


@contextmanager
def counting(metrics: LoaderMetrics | None) -> Iterator[None]:
    """The run's events counted into `metrics` whatever --log-level prints: the `lakeinlet` tree
    lets INFO through to the counter while its printing handlers keep the level it had."""
    if metrics is None:
        yield
        return
    tree, counts = logging.getLogger("lakeinlet"), EventCounts(metrics)
    level, shown, printing = tree.level, tree.getEffectiveLevel(), {h: h.level for h in tree.handlers}
    for handler in printing:
        handler.setLevel(max(handler.level, shown))
    tree.setLevel(min(shown, logging.INFO))
    tree.addHandler(counts)
    try:
        yield
    finally:
        tree.removeHandler(counts)
        tree.setLevel(level)
        for handler, was in printing.items():
            handler.setLevel(was)
