"""One row per event id per batch: a message handed to two receivers (moto does it; SQS standard
queues may) and duplicate notifications in two messages; every receipt is still acknowledged,
after the commit, and a superseded receipt handle is not reported as a lost delete."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import Poller
from lakeinlet.sources.ports import EntryFailure, Message
from tests.fakes import MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit


class HandsOutTwice(InMemoryQueue):
    """Makes every message visible again right after its first receipt, so it is received a second
    time with a new receipt handle; the first handle is then superseded (deleting it fails)."""

    def __init__(self, journal: list[tuple[str, object]] | None = None) -> None:
        super().__init__()
        self.seen: set[str] = set()
        self.journal = journal
        self.deleted: list[str] = []

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        got = super().receive(max_messages, wait_seconds, visibility_timeout)
        first = [m for m in got if m.message_id not in self.seen]
        self.seen |= {m.message_id for m in first}
        self.change_visibility([m.receipt_handle for m in first], 0)
        return got

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        if self.journal is not None:
            self.journal.append(("delete", {h.split(".")[0] for h in receipt_handles}))
        self.deleted += receipt_handles
        return super().delete(receipt_handles)


def event_ids(changelog: MemoryChangelog) -> list[str]:
    return [r.event.event_id for r in changelog.rows]


def test_a_message_received_twice_is_one_row_and_both_receipts_are_deleted() -> None:
    queue, changelog = HandsOutTwice(), MemoryChangelog()
    queue.send_batch([s3_body(f"k{i}") for i in range(3)])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(batch_size=100)).run()
    ids = event_ids(changelog)
    assert len(changelog.commits) == 1, f"expected one batch, found {len(changelog.commits)} commits"
    assert len(ids) == len(set(ids)) == 3, f"expected one row per event id, found {ids}"
    assert summary.messages == 6, f"expected 6 receipts of 3 messages, found {summary.messages}"
    assert len(queue.deleted) == 6, f"expected both receipts of each message deleted, found {queue.deleted}"
    assert (summary.duplicates, summary.superseded) == (3, 3), summary
    assert summary.delete_failures == 0, f"superseded handles reported as failures: {summary}"
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)


def test_both_copies_are_deleted_only_after_the_commit() -> None:
    journal: list[tuple[str, object]] = []
    queue, changelog = HandsOutTwice(journal), MemoryChangelog(journal)
    queue.send_batch([s3_body(f"k{i}") for i in range(4)])
    Poller(queue=queue, changelog=changelog, settings=settings(batch_size=100)).run()
    ops = [op for op, _ in journal]
    assert ops[0] == "commit" and set(ops[1:]) == {"delete"}, f"expected commit then deletes, found {ops}"


def test_duplicate_notifications_in_two_messages_are_one_row() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body("same"), s3_body("same"), s3_body("other")])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(batch_size=100)).run()
    assert sorted(r.event.key for r in changelog.rows) == ["other", "same"], changelog.rows
    assert (summary.acked, summary.duplicates, summary.delete_failures) == (3, 1, 0), summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)


def test_a_batch_closed_by_size_counts_distinct_rows() -> None:
    queue, changelog = InMemoryQueue(), MemoryChangelog()
    queue.send_batch([s3_body("dup")] * 5 + [s3_body(f"k{i}") for i in range(4)])
    Poller(queue=queue, changelog=changelog, settings=settings(batch_size=3, receivers=1)).run()
    for rows, meta in changelog.commits:
        ids = [r.event.event_id for r in rows]
        assert len(ids) == len(set(ids)), f"batch {meta['poll_batch']} repeats an event id: {ids}"
        assert meta["rows"] == str(len(rows)), meta
