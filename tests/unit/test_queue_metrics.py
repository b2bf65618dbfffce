"""The poller's queue depth gauge: read at most once per interval whatever the scrapes, left out
(never failing the scrape) when the read fails, and read again when the next reading is due."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from lakeinlet.errors import TransientError
from lakeinlet.queues import QueueDepths
from lakeinlet.sources.queue_metrics import QueueDepthCollector

pytestmark = pytest.mark.unit


class Queue:
    """Depths that change at each read, or fail while `down`."""

    def __init__(self) -> None:
        self.reads, self.down = 0, False

    def depths(self) -> QueueDepths:
        self.reads += 1
        if self.down:
            raise TransientError("SQS get_queue_attributes on https://sqs/q: ServiceUnavailable")
        return QueueDepths(visible=10 * self.reads, in_flight=self.reads, delayed=0)


def scrape(registry: CollectorRegistry) -> str:
    return generate_latest(registry).decode()


def test_read_at_most_once_an_interval_left_out_when_it_fails_and_read_again_when_due() -> None:
    queue, now = Queue(), [100.0]
    registry = CollectorRegistry()
    registry.register(QueueDepthCollector(queue.depths, every=60, clock=lambda: now[0]))
    assert queue.reads == 0  # registering reads nothing
    first = scrape(registry)
    assert 'lakeinlet_poller_queue_messages{state="visible"} 10.0' in first
    assert 'lakeinlet_poller_queue_messages{state="in_flight"} 1.0' in first
    assert 'lakeinlet_poller_queue_messages{state="delayed"} 0.0' in first
    now[0] += 59
    assert scrape(registry) == first and queue.reads == 1  # scrapes inside the interval: no call
    now[0] += 1
    assert 'state="visible"} 20.0' in scrape(registry) and queue.reads == 2
    queue.down, now[0] = True, now[0] + 60
    assert "lakeinlet_poller_queue_messages{" not in scrape(registry)  # left out; the scrape answers
    assert "lakeinlet_poller_queue_messages{" not in scrape(registry) and queue.reads == 3  # not retried yet
    queue.down, now[0] = False, now[0] + 60
    assert 'state="visible"} 40.0' in scrape(registry) and queue.reads == 4
