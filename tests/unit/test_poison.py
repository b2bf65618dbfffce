"""Poison messages with `poison="dlq"`: sent to the DLQ at once (body and attributes intact, the
parse error added), deleted only after the send succeeded, `until_empty` waits for them; every
poison error is logged, at most N lines a minute with a count of the suppressed ones; and a
notification with no records is not poison."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from lakeinlet.errors import TransientError
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poison import ERROR_ATTRIBUTE
from lakeinlet.sources.poller import Poller
from lakeinlet.sources.ports import EntryFailure, Message, MessageAttribute
from tests.fakes import EVENTS, MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit

MALFORMED = (EVENTS / "malformed.json").read_text()
NOT_AN_EVENT = (EVENTS / "not_s3_event.json").read_text()
ATTRS = {"origin": MessageAttribute("String", "uploader-7"), "attempt": MessageAttribute("Number", "2"),
         "blob": MessageAttribute("Binary", binary_value=b"\x00\xff")}


class JournalDlq(InMemoryQueue):
    """A DLQ that journals sends, failing the first `fail` send calls (whole call or per entry)."""

    def __init__(self, journal: list[str], fail: int = 0, whole_call: bool = False) -> None:
        super().__init__(name="dlq")
        self.journal, self.fail, self.whole_call = journal, fail, whole_call

    def send(self, messages: Sequence[Message]) -> list[EntryFailure]:
        if self.fail:
            self.fail -= 1
            self.journal += [f"send failed {m.message_id}" for m in messages]
            if self.whole_call:
                raise TransientError("SendMessageBatch failed (injected)")
            return [EntryFailure(m.receipt_handle, "InternalError", "injected", False) for m in messages]
        self.journal += [f"send {m.message_id}" for m in messages]
        return super().send(messages)


class JournalQueue(InMemoryQueue):
    """Journals deletes; with `twice`, hands every message out a second time (a new receipt
    handle) right after its first receipt, as a queue handing one message to two receivers."""

    def __init__(self, journal: list[str], dlq: InMemoryQueue, twice: bool = False) -> None:
        super().__init__(max_receive_count=5, dlq=dlq)
        self.journal, self.twice, self.seen = journal, twice, set[str]()

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        got = super().receive(max_messages, wait_seconds, visibility_timeout)
        first = [m for m in got if self.twice and m.message_id not in self.seen]
        self.seen |= {m.message_id for m in first}
        self.change_visibility([m.receipt_handle for m in first], 0)
        return got

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.journal += [f"delete {h.split('.')[0]}" for h in receipt_handles]
        return super().delete(receipt_handles)


def poison_message(body: str = MALFORMED, attrs: dict[str, MessageAttribute] | None = None) -> Message:
    return Message("unsent", "unsent", body, attributes=ATTRS if attrs is None else attrs)


def dlq_contents(dlq: InMemoryQueue) -> list[Message]:
    got: list[Message] = []
    while batch := dlq.receive(10, 0, 30):
        got += batch
    return got


def test_poison_is_moved_to_the_dlq_at_once_with_its_body_and_attributes() -> None:
    journal: list[str] = []
    dlq = JournalDlq(journal)
    queue, changelog = JournalQueue(journal, dlq), MemoryChangelog()
    queue.send([poison_message()])
    queue.send_batch([s3_body("good")])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(poison="dlq"), dlq=dlq).run()
    (moved,) = dlq_contents(dlq)
    assert moved.body == MALFORMED, f"expected the body unchanged, found {moved.body!r}"
    assert {k: v for k, v in moved.attributes.items() if k != ERROR_ATTRIBUTE} == ATTRS
    assert "not JSON" in str(moved.attributes[ERROR_ATTRIBUTE].string_value), moved.attributes
    assert [r.event.key for r in changelog.rows] == ["good"]
    assert (summary.poison, summary.poison_moved, summary.poison_move_failures) == (1, 1, 0), summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0), "expected the queue drained"


@pytest.mark.parametrize("whole_call", [False, True], ids=["entry-failed", "call-failed"])
def test_a_failed_send_deletes_nothing_and_until_empty_waits_for_the_retry(whole_call: bool) -> None:
    journal: list[str] = []
    dlq = JournalDlq(journal, fail=1, whole_call=whole_call)
    queue = JournalQueue(journal, dlq)
    queue.send([poison_message()])
    summary = Poller(queue=queue, changelog=MemoryChangelog(), settings=settings(poison="dlq"),
                     dlq=dlq).run()
    steps = [j.rsplit(" ", 1)[0] for j in journal]
    assert steps == ["send failed", "send", "delete"] and len({j.rsplit(" ", 1)[1] for j in journal}) == 1, (
        f"expected a failed send (message kept), a retry, then the delete; found {journal}")
    assert (summary.poison_moved, summary.poison_move_failures) == (1, 1), summary
    assert [m.body for m in dlq_contents(dlq)] == [MALFORMED]
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0), "until_empty exited early"


def test_a_message_that_cannot_be_moved_is_left_to_the_redrive_after_a_few_tries() -> None:
    journal: list[str] = []
    dlq = JournalDlq(journal, fail=100)
    queue = JournalQueue(journal, dlq)
    queue.send([poison_message()])
    summary = Poller(queue=queue, changelog=MemoryChangelog(), settings=settings(poison="dlq"),
                     dlq=dlq).run()
    assert not [j for j in journal if j.startswith("delete")], f"deleted without a send: {journal}"
    assert summary.poison_moved == 0 and summary.poison_move_failures == 3, summary
    assert queue.depths().in_flight == 1, "expected the message left to SQS's redrive (in flight)"


def test_a_poison_message_received_twice_is_sent_once_and_both_receipts_deleted() -> None:
    journal: list[str] = []
    dlq = JournalDlq(journal)
    queue = JournalQueue(journal, dlq, twice=True)
    queue.send([poison_message(NOT_AN_EVENT)])
    summary = Poller(queue=queue, changelog=MemoryChangelog(), settings=settings(poison="dlq"),
                     dlq=dlq).run()
    assert len([j for j in journal if j.startswith("send")]) == 1, f"expected one copy sent: {journal}"
    assert len([j for j in journal if j.startswith("delete")]) == 2, f"expected both receipts: {journal}"
    assert summary.poison == 2 and summary.poison_moved == 1 and summary.delete_failures == 0, summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0)


@pytest.mark.parametrize("name", ["s3_records_empty.json", "sns_wrapped_records_empty.json"])
def test_a_notification_with_no_records_is_acknowledged_never_moved(name: str) -> None:
    """`{"Records": []}` (bare or in an SNS envelope) holds no events: deleted after the batch's
    commit, counted as skipped, no row, and never sent to the DLQ as poison."""
    journal: list[str] = []
    dlq = JournalDlq(journal)
    queue, changelog = JournalQueue(journal, dlq), MemoryChangelog()
    queue.send([poison_message((EVENTS / name).read_text(), attrs={})])
    queue.send_batch([s3_body("good")])
    summary = Poller(queue=queue, changelog=changelog, settings=settings(poison="dlq"), dlq=dlq).run()
    assert not dlq_contents(dlq) and summary.poison == 0, summary
    assert [r.event.key for r in changelog.rows] == ["good"]
    assert (summary.acked, summary.skipped) == (2, 1), summary
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0), "expected the queue drained"


def test_ten_attributes_are_kept_and_the_error_is_left_out() -> None:
    full = {f"a{i}": MessageAttribute("String", str(i)) for i in range(10)}
    dlq = JournalDlq([])
    queue = JournalQueue([], dlq)
    queue.send([poison_message(attrs=full)])
    Poller(queue=queue, changelog=MemoryChangelog(), settings=settings(poison="dlq"), dlq=dlq).run()
    (moved,) = dlq_contents(dlq)
    assert dict(moved.attributes) == full, "SQS takes at most 10 attributes: the originals win"


def test_every_poison_error_is_logged_at_most_n_lines_a_minute(caplog: pytest.LogCaptureFixture) -> None:
    queue = InMemoryQueue()
    queue.send_batch([MALFORMED] * 25)
    with caplog.at_level(logging.WARNING, logger="lakeinlet.sources"):
        summary = Poller(queue=queue, changelog=MemoryChangelog(),
                         settings=settings(poison_log_per_minute=10, visibility_timeout=60)).run()
    lines = [r for r in caplog.records if r.getMessage() == "poison"]
    assert len(lines) == 10, f"expected 10 poison lines (the limit), found {len(lines)}"
    assert summary.poison == 25 and summary.poison_log_suppressed == 15, summary
    (tail,) = [r for r in caplog.records if r.getMessage() == "poison log lines suppressed"]
    assert tail.lakeinlet_fields["suppressed"] == 15, tail.lakeinlet_fields  # type: ignore[attr-defined]
