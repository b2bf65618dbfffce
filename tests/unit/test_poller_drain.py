"""Drain-and-stop (`until_empty`): the run ends soon after the queue is empty, whatever the
long-poll wait and batch window, and only once every receiver has seen the queue empty."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from lakeinlet.errors import TransientError
from lakeinlet.sources import redelete
from lakeinlet.sources.drain import DrainWatch
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import Poller
from lakeinlet.sources.ports import EntryFailure, Message
from tests.fakes import MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit

README_DEFAULTS = {"wait_seconds": 20, "batch_seconds": 10.0, "receivers": 4, "batch_size": 1000,
                   "visibility_timeout": 120}


class RecordingQueue(InMemoryQueue):
    """Records the long-poll wait of every receive call."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[int] = []

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        self.waits.append(wait_seconds)
        return super().receive(max_messages, wait_seconds, visibility_timeout)


def test_until_empty_with_the_default_waits_ends_soon_after_the_queue_is_empty() -> None:
    queue, changelog = RecordingQueue(), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(4)])
    started = time.monotonic()
    summary = Poller(queue=queue, changelog=changelog, settings=settings(**README_DEFAULTS)).run()
    elapsed = time.monotonic() - started
    assert (summary.rows, summary.commits, summary.acked) == (4, 1, 4), summary
    assert elapsed < 4.0, (f"expected the drain to end about 1 s (the drain wait) after the queue "
                           f"is empty, took {elapsed:.1f} s (receive waits {sorted(set(queue.waits))})")


def test_until_empty_receives_wait_at_most_the_drain_wait() -> None:
    queue, changelog = RecordingQueue(), MemoryChangelog()
    queue.send_batch([s3_body("one")])
    Poller(queue=queue, changelog=changelog,
           settings=settings(**README_DEFAULTS, drain_wait_seconds=2)).run()
    assert queue.waits and max(queue.waits) == 2, f"expected waits of 2 s, found {queue.waits}"


def test_a_wait_shorter_than_the_drain_wait_is_kept() -> None:
    queue, changelog = RecordingQueue(), MemoryChangelog()
    queue.send_batch([s3_body("one")])
    Poller(queue=queue, changelog=changelog, settings=settings(wait_seconds=0)).run()
    assert set(queue.waits) == {0}, f"expected --wait-seconds 0 to be kept, found {queue.waits}"


class SlowFirstReceive(InMemoryQueue):
    """The first receive call returns its messages only after `delay` seconds (a receiver whose
    long poll is still out while the others already see an empty queue)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay, self.calls = delay, 0

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        self.calls += 1
        if self.calls == 1:
            got = super().receive(max_messages, wait_seconds, visibility_timeout)
            time.sleep(self.delay)
            return got
        return super().receive(max_messages, wait_seconds, visibility_timeout)


def test_the_drain_waits_for_every_receiver_to_see_the_queue_empty() -> None:
    queue, changelog = SlowFirstReceive(delay=1.0), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(receivers=2)).run()
    assert summary.rows == 3 and summary.commits == 1, summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)



def test_drain_watch_needs_every_receiver_empty_after_the_last_messages() -> None:
    watch = DrainWatch(receivers=3)
    watch.record(0, 0)
    watch.record(1, 0)
    assert not watch.drained(), "two of three receivers saw the queue empty: not drained yet"
    watch.record(2, 5)  # messages: the empty receives before them no longer count
    watch.record(2, 0)
    watch.record(1, 0)
    assert not watch.drained(), "receiver 0 has not seen the queue empty since the last messages"
    watch.record(0, 0)
    assert watch.drained()
    watch.reset()
    assert not watch.drained(), "a reset must forget the empty receives seen so far"


def test_a_held_receiver_resumes_when_another_brings_messages() -> None:
    watch = DrainWatch(receivers=2)
    watch.record(0, 0)
    released = threading.Event()
    thread = threading.Thread(target=lambda: (watch.hold(0, lambda: True), released.set()))
    thread.start()
    assert not released.wait(0.3), "receiver 0 should wait while its empty receive still counts"
    watch.record(1, 3)
    assert released.wait(2), "receiver 0 should resume once receiver 1 brought messages"
    thread.join(2)


class FailingDeletes(InMemoryQueue):
    """Its first `fails` delete calls fail as a timeout under load does (after the client's retries)."""

    def __init__(self, fails: int) -> None:
        super().__init__()
        self.fails, self.calls = fails, 0

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.calls += 1
        if self.calls <= self.fails:
            raise TransientError("delete_message_batch: read timeout (injected)")
        return super().delete(receipt_handles)


def test_a_drain_never_ends_with_committed_messages_whose_delete_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36: `--until-empty` exited with 10 committed messages in flight (one failed delete call,
    left to redelivery): they came back as duplicate changelog rows."""
    monkeypatch.setattr(redelete, "FIRST_PAUSE", 0.01)
    queue, changelog = FailingDeletes(fails=2), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(10)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(receivers=1)).run()
    assert (summary.commits, summary.acked, summary.delete_failures) == (1, 10, 0), summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)


def test_deletes_that_keep_failing_are_let_go_after_the_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redelete, "FIRST_PAUSE", 0.01)
    queue = FailingDeletes(fails=10**6)
    queue.send_batch([s3_body(f"k{i}") for i in range(10)])
    summary = Poller(queue=queue, changelog=MemoryChangelog(),
                     settings=settings(receivers=1, delete_attempts=2)).run()
    assert (summary.acked, summary.delete_failures, queue.calls) == (0, 10, 3), summary  # 1 + 2 retries
    assert queue.depths().in_flight == 10  # left to redelivery, and counted
