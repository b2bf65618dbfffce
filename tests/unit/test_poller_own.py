"""The lake never ingests itself: events under the changelog and the --lake roots are acknowledged
without a row, counted, and named by at most one log line a minute."""

from __future__ import annotations

import logging
from collections import Counter

import pytest

from lakeinlet.own import OwnLocations
from lakeinlet.sources.envelopes import EventFilter
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.own_events import OWN_EVENTS, OwnEventLog
from lakeinlet.sources.poller import Poller
from tests.fakes import MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit

OWN = OwnLocations.of(["s3://landing-bucket/lake/changelog", "s3://landing-bucket/lake/tables"])
OWN_KEYS = ["lake/changelog/_delta_log/00000000000000000003.json",
            "lake/changelog/received_date=2026-11-01/part-0.parquet", "lake/tables/orders/part-1.parquet"]
GOOD_KEYS = ["incoming/a.json", "lake/changelog-notes.txt", "lake/tablesx/b.json"]


def own_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == OWN_EVENTS]


def test_own_events_are_acknowledged_without_rows_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    queue = InMemoryQueue()
    queue.send_batch([s3_body(k) for pair in zip(OWN_KEYS, GOOD_KEYS, strict=True) for k in pair])
    changelog = MemoryChangelog()
    with caplog.at_level(logging.WARNING, "lakeinlet"):
        summary = Poller(queue=queue, changelog=changelog, settings=settings(
            batch_size=2, event_filter=EventFilter(own=OWN))).run()
    assert Counter(r.event.key for r in changelog.rows) == Counter(GOOD_KEYS), changelog.rows
    assert (summary.own, summary.acked, summary.skipped, summary.batches > 1) == (3, 6, 3, True), summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0), "expected every message deleted"
    (line,) = own_lines(caplog)  # several batches in well under a minute: one line
    assert line.lakeinlet_fields["locations"].keys() <= {  # type: ignore[attr-defined]
        "s3://landing-bucket/lake/changelog/", "s3://landing-bucket/lake/tables/"}


def test_at_most_one_line_a_minute_counting_what_came_since(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    report = OwnEventLog(clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "lakeinlet"):
        for t, location in ((0, "s3://l/cl/"), (30, "s3://l/cl/"), (59, "s3://l/t/"), (61, "s3://l/cl/"),
                            (62, "s3://l/cl/")):
            now[0] = t
            report.add(Counter({location: 2}))
        report.add(Counter())
    found = [r.lakeinlet_fields["locations"] for r in own_lines(caplog)]  # type: ignore[attr-defined]
    assert found == [{"s3://l/cl/": 2}, {"s3://l/cl/": 4, "s3://l/t/": 2}], found
