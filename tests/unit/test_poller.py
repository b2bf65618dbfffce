"""The poll loop over the in-memory queue and an in-memory changelog: batching, ordering of
commit and delete (guarantee 1), crash points, poison, heartbeat, stop, flaky adapters."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.events import ReceivedEvent
from lakeinlet.sources.crash_points import InjectedCrash, crash_at
from lakeinlet.sources.envelopes import EventFilter
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import Poller, RetryReport
from lakeinlet.sources.ports import EntryFailure, Message
from tests.fakes import EVENTS, JournalQueue, MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit


def test_drain_commits_one_batch_per_n_events_with_exact_keys() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    keys = [f"in/file {i}+x%2B.json" for i in range(25)]
    queue.send_batch([s3_body(k) for k in keys])
    summary = Poller(queue=queue, changelog=changelog, settings=settings()).run()
    assert sorted(r.event.key for r in changelog.rows) == sorted(keys)
    assert [len(rows) for rows, _ in changelog.commits] == [10, 10, 5]
    assert (summary.rows, summary.acked, summary.commits, summary.poison) == (25, 25, 3, 0)
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)
    meta = changelog.commits[0][1]
    assert meta["source_id"] == "lakeinlet" and meta["messages"] == "10" and meta["rows"] == "10"
    assert len({m["poll_batch"] for _, m in changelog.commits}) == 3
    assert all(r.poll_batch == m["poll_batch"] for rows, m in changelog.commits for r in rows)


def test_every_delete_comes_after_the_commit_of_its_rows() -> None:
    """Guarantee 1: fails if any message is deleted before the commit that holds its rows."""
    journal: list[tuple[str, object]] = []
    queue, changelog = JournalQueue(journal), MemoryChangelog(journal)
    queue.send_batch([s3_body(f"k{i}") for i in range(47)])
    Poller(queue=queue, changelog=changelog, settings=settings(batch_size=7)).run()
    committed: set[str] = set()
    deleted: set[str] = set()
    for op, ids in journal:
        assert isinstance(ids, set)
        if op == "commit":
            committed |= ids
        else:
            assert ids <= committed, f"deleted before commit: {sorted(ids - committed)}"
            deleted |= ids
    assert len(deleted) == 47


def test_a_failed_commit_deletes_nothing_and_the_messages_come_back() -> None:
    journal: list[tuple[str, object]] = []
    queue, changelog = JournalQueue(journal), MemoryChangelog(journal, fail=1)
    queue.send_batch([s3_body(f"k{i}") for i in range(5)])
    with pytest.raises(TransientError):
        Poller(queue=queue, changelog=changelog, settings=settings(visibility_timeout=2)).run()
    assert [op for op, _ in journal] == []
    assert queue.depths().in_flight == 5
    time.sleep(2.2)
    summary = Poller(queue=queue, changelog=changelog, settings=settings()).run()
    assert summary.rows == 5 and sorted(r.event.key for r in changelog.rows) == [f"k{i}" for i in range(5)]


def test_crash_after_commit_redelivers_and_duplicates_share_event_ids() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(6)])
    with pytest.raises(InjectedCrash):
        Poller(queue=queue, changelog=changelog, settings=settings(visibility_timeout=2),
               crash=crash_at("after_commit")).run()
    first = {r.event.event_id: r.event.key for r in changelog.rows}
    assert queue.depths().in_flight == 6 and len(first) == 6  # committed, not deleted
    time.sleep(2.2)
    Poller(queue=queue, changelog=changelog, settings=settings()).run()
    ids = [r.event.event_id for r in changelog.rows]
    assert {r.event.key for r in changelog.rows} == {f"k{i}" for i in range(6)}
    assert len(ids) == 6 + len(first)  # the crashed batch was written again...
    assert set(first) <= set(ids[len(first):])  # ...with the same event ids
    assert queue.depths().visible == 0 and queue.depths().in_flight == 0


def test_poison_is_left_for_the_dlq_and_counted() -> None:
    dlq = InMemoryQueue(name="dlq")
    queue, changelog = InMemoryQueue(max_receive_count=2, dlq=dlq), MemoryChangelog()
    queue.send_batch(["{not json", s3_body("good")])
    for _ in range(2):
        summary = Poller(queue=queue, changelog=changelog, settings=settings(visibility_timeout=1)).run()
        assert summary.poison >= 1 and "not JSON" in (summary.first_poison_error or "")
        time.sleep(1.2)
    Poller(queue=queue, changelog=changelog, settings=settings(visibility_timeout=1)).run()
    assert [r.event.key for r in changelog.rows] == ["good"]
    assert dlq.depths().visible == 1 and queue.depths().visible + queue.depths().in_flight == 0


def test_messages_without_rows_are_acked_without_a_commit() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([(EVENTS / n).read_text() for n in ("s3_test_event.json", "s3_restore.json")]
                     + [s3_body("x", bucket="someone-elses-bucket")])
    only_ours = settings(event_filter=EventFilter(frozenset({"landing-bucket"})))
    summary = Poller(queue=queue, changelog=changelog, settings=only_ours).run()
    assert changelog.commits == []
    assert (summary.acked, summary.skipped, summary.foreign, summary.rows) == (3, 3, 1, 0)
    assert queue.depths().visible + queue.depths().in_flight == 0


def test_foreign_buckets_are_never_written_beside_allowed_ones() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body("mine"), s3_body("theirs", bucket="other-bucket")])
    only_ours = settings(event_filter=EventFilter(frozenset({"landing-bucket"})))
    Poller(queue=queue, changelog=changelog, settings=only_ours).run()
    assert [(r.event.bucket, r.event.key) for r in changelog.rows] == [("landing-bucket", "mine")]


def test_heartbeat_keeps_an_open_batch_hidden_beyond_the_visibility_timeout() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(4)])
    poller = Poller(queue=queue, changelog=changelog,
                    settings=settings(visibility_timeout=2, batch_seconds=4.5, batch_size=100,
                                      until_empty=False))
    threading.Timer(5.0, poller.stop).start()
    poller.run()
    assert sorted(r.event.key for r in changelog.rows) == [f"k{i}" for i in range(4)]  # no redelivery
    assert len(changelog.commits) == 1 and poller.summary.acked == 4


def test_stop_commits_the_open_batch_and_acks_it() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(8)])
    poller = Poller(queue=queue, changelog=changelog,
                    settings=settings(batch_seconds=60, batch_size=1000, until_empty=False))
    thread = threading.Thread(target=poller.run)
    thread.start()
    deadline = time.monotonic() + 5
    while queue.depths().in_flight < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert changelog.commits == []  # the batch is open, not committed yet
    poller.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert len(changelog.commits) == 1 and len(changelog.rows) == 8
    assert queue.depths().in_flight == 0 and queue.depths().visible == 0


class TimedChangelog(MemoryChangelog):
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        self.times.append(time.monotonic())
        return super().append(rows, metadata)


def test_stop_commits_the_open_batch_without_waiting_for_the_long_polls() -> None:
    """On SIGTERM the open batch is committed at once, not after the receivers' long polls end
    (up to --wait-seconds: a container's grace period may run out first)."""
    queue, changelog = InMemoryQueue(), TimedChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    poller = Poller(queue=queue, changelog=changelog,
                    settings=settings(wait_seconds=4, batch_seconds=60, until_empty=False))
    thread = threading.Thread(target=poller.run)
    thread.start()
    deadline = time.monotonic() + 5
    while queue.depths().in_flight < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # the receivers are in their next (empty) long poll now
    stopped = time.monotonic()
    poller.stop()
    thread.join(10)
    assert changelog.times and changelog.times[0] - stopped < 1.5, (
        f"expected the commit within 1.5 s of stop, found {changelog.times[0] - stopped:.1f} s")
    assert len(changelog.rows) == 3 and queue.depths().in_flight == 0


class FlakyDeletes(InMemoryQueue):
    """Fails the first entry of the first `times` delete calls (sender fault or server side)."""

    def __init__(self, times: int, sender_fault: bool) -> None:
        super().__init__()
        self.times, self.sender_fault, self.calls = times, sender_fault, 0

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.calls += 1
        if self.times:
            self.times -= 1
            first, *rest = receipt_handles
            return [EntryFailure(first, "InternalError", "injected", self.sender_fault),
                    *super().delete(rest)]
        return super().delete(receipt_handles)


def test_server_side_delete_failures_are_retried() -> None:
    queue, changelog = FlakyDeletes(times=2, sender_fault=False), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings()).run()
    assert (summary.acked, summary.delete_failures) == (3, 0)
    assert queue.depths().in_flight == 0


def test_sender_fault_delete_failures_are_left_to_redelivery() -> None:
    queue, changelog = FlakyDeletes(times=1, sender_fault=True), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings()).run()
    assert (summary.acked, summary.delete_failures) == (2, 1)
    assert queue.depths().in_flight == 1 and queue.calls == 1


class FlakyReceives(InMemoryQueue):
    def __init__(self, error: Exception, times: int) -> None:
        super().__init__()
        self.error, self.times = error, times

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        if self.times:
            self.times -= 1
            raise self.error
        return super().receive(max_messages, wait_seconds, visibility_timeout)


def test_transient_receive_errors_are_retried() -> None:
    queue, changelog = FlakyReceives(TransientError("throttled"), times=1), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(receivers=1)).run()
    assert summary.rows == 3


def test_a_terminal_receive_error_stops_the_run() -> None:
    queue, changelog = FlakyReceives(TerminalError("queue does not exist"), times=5), MemoryChangelog()
    with pytest.raises(TerminalError, match="does not exist"):
        Poller(queue=queue, changelog=changelog, settings=settings(receivers=2)).run()


def test_a_queue_never_reached_stops_the_run_after_the_connect_timeout() -> None:
    queue = FlakyReceives(TransientError("Could not connect to the endpoint URL"), times=10**9)
    started = time.monotonic()
    gave_up = r"no receive succeeded in \d+ s \(--connect-timeout-seconds 0.5\)"
    with pytest.raises(TerminalError, match=gave_up):
        Poller(queue=queue, changelog=MemoryChangelog(),
               settings=settings(receivers=2, connect_timeout=0.5)).run()
    assert time.monotonic() - started < 10


class LostAfterFirst(FlakyReceives):
    """Reached once, then unreachable for a while (longer than the connect timeout), then back."""

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        if not self.reached:
            self.reached = True
            return InMemoryQueue.receive(self, 1, wait_seconds, visibility_timeout)
        return super().receive(max_messages, wait_seconds, visibility_timeout)

    reached = False


def test_a_connection_lost_after_the_first_receive_is_retried_past_the_connect_timeout() -> None:
    queue, changelog = LostAfterFirst(TransientError("connection reset"), times=2), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog,
                     settings=settings(receivers=1, connect_timeout=0.2)).run()
    assert summary.rows == 3 and queue.times == 0


def test_retries_are_reported_once_a_minute_with_their_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    report = RetryReport(lambda: now[0], connect_timeout=5)
    report.succeeded()
    with caplog.at_level("WARNING", logger="lakeinlet.sources"):
        for second in range(0, 130):
            now[0] = float(second)
            assert report.failed(TransientError("connection refused")) is None
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and lines[1].startswith("receive failed 60 time(s)")
