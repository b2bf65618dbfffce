"""The poller's Prometheus metrics, read from its live run summary at each scrape (no counter is
kept twice), and its heartbeat: one pass of the receive loop, idle or not."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily
from prometheus_client.registry import Collector

from lakeinlet.health import Heartbeat
from lakeinlet.sources.summary import RunSummary

COUNTERS = (("messages_received", "messages", "Queue messages received into committed batches"),
            ("events_written", "rows", "Events written to the changelog as rows"),
            ("batches", "batches", "Batches closed (one changelog commit each when they hold rows)"),
            ("poison", "poison", "Poison message receipts (not JSON, not an S3 event)"),
            ("receive_errors", "receive_errors", "Receives that failed and were retried"),
            ("commit_conflicts", "commit_conflicts", "Changelog versions another poller took first"),
            ("delete_failures", "delete_failures", "Messages whose delete failed after its attempts"))
"""(metric name without `lakeinlet_poller_`/`_total`, RunSummary field, help)."""
WITHOUT_ROW = (("skipped", "skipped"), ("duplicate", "duplicates"), ("foreign", "foreign"),
               ("own", "own"))
"""`lakeinlet_poller_acknowledged_without_row_total`'s reason label → RunSummary field."""


class PollerCollector(Collector):
    """Every poller metric, from the summary the poller keeps for its last line."""

    def __init__(self, summary: RunSummary) -> None:
        self.summary = summary

    def collect(self) -> Iterator[Any]:
        s = self.summary
        for name, attr, text in COUNTERS:
            yield CounterMetricFamily(f"lakeinlet_poller_{name}", text, value=getattr(s, attr))
        without = CounterMetricFamily("lakeinlet_poller_acknowledged_without_row", "Events acknowledged "
                                      "without a changelog row, by reason", labels=["reason"])
        for reason, attr in WITHOUT_ROW:
            without.add_metric([reason], getattr(s, attr))
        yield without
        yield SummaryMetricFamily("lakeinlet_poller_batch_commit_seconds", "Time each batch's changelog "
                                  "commit took", count_value=s.batches, sum_value=s.commit_seconds)
        yield GaugeMetricFamily("lakeinlet_poller_receivers", "Receivers polling now", value=s.receivers)
        yield GaugeMetricFamily("lakeinlet_poller_changelog_version", "The changelog version of the "
                                "newest batch this poller committed (-1: none yet)",
                                value=-1 if s.last_version is None else s.last_version)


def beating(heart: Heartbeat) -> Callable[[RunSummary], None]:
    """The poller's `beat`: a pass moved when messages came; idle lines name the changelog version."""
    def beat(summary: RunSummary) -> None:
        heart.beat(summary.messages, lambda: {"changelog_version": summary.last_version,
                                              "messages": summary.messages})
    return beat
