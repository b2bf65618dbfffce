"""The event queue's depth as poller metrics: one GetQueueAttributes call at most every
`DEPTH_SECONDS`, made when the metrics are collected (a scrape or the final push), never per receive.
SQS gives no age of the oldest message through GetQueueAttributes: CloudWatch's
`ApproximateAgeOfOldestMessage` has it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from lakeinlet.errors import LakeinletError
from lakeinlet.queues import QueueDepths

DEPTH_SECONDS = 60.0
"""Seconds a queue depth reading serves scrapes for: SQS's approximate counts settle over about a
minute anyway, and each reading is a billed request."""
NAME = "lakeinlet_poller_queue_messages"
HELP = "Messages in the event queue by state (visible, in_flight, delayed), read at most once a minute"

log = logging.getLogger(__name__)


class QueueDepthCollector(Collector):
    """`lakeinlet_poller_queue_messages{state}` from `read` (the queue's `depths`), cached for
    `every` seconds of `clock`. A failed read leaves the gauge out until the next reading is due,
    with a warning line (one a reading at most): a scrape never fails for it."""

    def __init__(self, read: Callable[[], QueueDepths], every: float = DEPTH_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._read, self._every, self._clock = read, every, clock
        self._lock = threading.Lock()
        self._at: float | None = None
        self._last: QueueDepths | None = None

    def depths(self) -> QueueDepths | None:
        """The latest reading, taken now if the last is `every` seconds old (or none was taken)."""
        with self._lock:
            now = self._clock()
            if self._at is None or now - self._at >= self._every:
                self._at = now
                try:
                    self._last = self._read()
                except LakeinletError as exc:
                    log.warning("queue depth not read (metric %s left out until the next reading): %s",
                                NAME, exc)
                    self._last = None
            return self._last

    def describe(self) -> Iterator[Any]:
        yield GaugeMetricFamily(NAME, HELP, labels=["state"])  # registering reads nothing

    def collect(self) -> Iterator[Any]:
        depths = self.depths()
        if depths is None:
            return
        family = GaugeMetricFamily(NAME, HELP, labels=["state"])
        for state in ("visible", "in_flight", "delayed"):
            family.add_metric([state], getattr(depths, state))
        yield family
