"""`run`'s heartbeat and metrics: every batch and every drain (idle or not) beats, each drain's end
measures the routes' lag and freshness (with metrics on), and the endpoint serves while the run goes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lakeinlet.health import Heartbeat
from lakeinlet.incremental.commands.fanout import Fanout
from lakeinlet.incremental.metrics import LoaderMetrics, counting
from lakeinlet.incremental.reports import BatchReport
from lakeinlet.incremental.wiring import Parts
from lakeinlet.metrics import MetricsSection, registry_of, serving

Progress = Callable[[BatchReport, str], None]


@dataclass
class Watch:
    heart: Heartbeat
    metrics: LoaderMetrics | None
    fan: Fanout
    parts: Sequence[Parts]
    batches: int = 0

    def progress(self, then: Progress) -> Progress:
        """The Fanout's progress hook, counting and beating after `then`."""
        def each(report: BatchReport, route: str) -> None:
            then(report, route)
            self.batches += 1
            if self.metrics:
                self.metrics.batch(report, route)
            self.heart.beat(self.batches)
        return each

    def after_drain(self, then: Callable[[int], None]) -> Callable[[int], None]:
        def after(drains: int) -> None:
            then(drains)
            self.drained()
        return after

    def drained(self) -> None:
        """A drain ended: positions measured (metrics on), and one beat, idle or not."""
        if self.metrics:
            self.metrics.measure(self.parts, [run.name for run in self.fan.runs])
        self.heart.beat(self.batches, self.caught_up)

    def caught_up(self) -> dict[str, Any]:
        """The idle line's fields: the changelog version each table's checkpoint holds."""
        at = {run.name: _version(p) for run, p in zip(self.fan.runs, self.parts, strict=False)}
        return {"caught_up_at_version": at[""]} if list(at) == [""] else {"caught_up_at_version": at}


def _version(parts: Parts) -> int | None:
    position = parts.target.checkpoint().position
    return None if position is None else position.complete


@contextmanager
def watching(section: MetricsSection, fan: Fanout, parts: Sequence[Parts]) -> Iterator[Watch]:
    """The run's Watch; its metrics (with --metrics-port or --metrics-push-gateway) count the run's
    cleanup, maintain and failure events while it goes."""
    heart = section.heartbeat()
    registry = registry_of(heart)
    metrics = LoaderMetrics(registry, fan.runs) if section.port or section.push_gateway else None
    with counting(metrics), serving(section, registry, heart, "lakeinlet-load"):
        yield Watch(heart, metrics, fan, parts)
