"""Receivers follow the backlog: doubled while full receives raise the rate, back down when the
step did not pay or the queue ran empty; a poller with a ceiling still drains exactly."""

from __future__ import annotations

import time

import pytest

from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import Poller
from lakeinlet.sources.ports import Message
from lakeinlet.sources.scaling import ReceiverScaler
from tests.fakes import MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def window(scaler: ReceiverScaler, clock: Clock, calls: int, messages_each: int = 10) -> int:
    """One second in which `calls` receives brought `messages_each` messages each."""
    for _ in range(calls):
        scaler.received(messages_each)
    clock.now += 1.0
    return scaler.tick()


def test_a_backlog_doubles_the_receivers_while_each_step_raises_the_rate() -> None:
    clock = Clock()
    scaler = ReceiverScaler(4, 16, clock)
    assert window(scaler, clock, 40) == 8  # full receives: try twice as many
    assert window(scaler, clock, 80) == 16  # the rate doubled: kept, and up again
    assert window(scaler, clock, 160) == 16  # the ceiling
    assert scaler.most == 16


def test_a_step_that_does_not_raise_the_rate_is_undone_and_retried_later() -> None:
    clock = Clock()
    scaler = ReceiverScaler(4, 16, clock, hold=10.0)
    assert window(scaler, clock, 40) == 8
    assert window(scaler, clock, 42) == 4  # 5% more: the server, not the receivers, limits it
    for _ in range(9):
        assert window(scaler, clock, 40) == 4  # held
    assert window(scaler, clock, 40) == 8  # probed again


def test_no_step_without_a_backlog_or_when_the_batcher_pushes_back() -> None:
    clock = Clock()
    scaler = ReceiverScaler(4, 16, clock)
    assert window(scaler, clock, 40, messages_each=3) == 4  # partly filled receives: no backlog
    scaler.pushed_back()
    assert window(scaler, clock, 40) == 4
    assert window(scaler, clock, 4) == 4  # too few calls to judge


def test_an_empty_receive_drops_back_to_the_floor_at_once() -> None:
    clock = Clock()
    scaler = ReceiverScaler(2, 8, clock)
    assert window(scaler, clock, 20) == 4
    scaler.received(0)
    assert scaler.target == 2


def test_a_ceiling_at_the_floor_keeps_the_count_fixed() -> None:
    clock = Clock()
    scaler = ReceiverScaler(4, 2, clock)
    assert (scaler.ceiling, window(scaler, clock, 400)) == (4, 4)


class SlowQueue(InMemoryQueue):
    """Every receive waits like a round trip over a slow network."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        time.sleep(self.seconds)
        return super().receive(max_messages, wait_seconds, visibility_timeout)


def test_a_poller_that_adds_receivers_drains_every_message_once() -> None:
    queue, changelog = SlowQueue(0.02), MemoryChangelog()
    keys = [f"k{i}" for i in range(1500)]
    queue.send_batch([s3_body(k) for k in keys])
    summary = Poller(queue=queue, changelog=changelog,
                     settings=settings(receivers=1, max_receivers=8, batch_size=100)).run()
    assert sorted(r.event.key for r in changelog.rows) == sorted(keys)
    assert (summary.rows, summary.acked, summary.commits) == (1500, 1500, 15)
    assert summary.receivers_max > 1  # the backlog brought more receivers
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)


def test_part_filled_receives_drop_back_to_the_floor() -> None:
    clock = Clock()
    scaler = ReceiverScaler(2, 8, clock)
    assert window(scaler, clock, 20) == 4
    assert window(scaler, clock, 40) == 8
    assert window(scaler, clock, 40, messages_each=4) == 2  # the backlog is gone: no empty receive needed
