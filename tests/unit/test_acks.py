"""The acker: server-side entry failures retried by the one policy, nothing else retried."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lakeinlet.errors import TransientError
from lakeinlet.sources.acks import Acker
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.ports import EntryFailure, Message

pytestmark = pytest.mark.unit


class FlakyDeletes(InMemoryQueue):
    """The first entry of the first `entry_fails` delete calls fails on the server side; the
    first `call_fails` calls fail as a whole (as after the client's own retries)."""

    def __init__(self, entry_fails: int = 0, call_fails: int = 0) -> None:
        super().__init__()
        self.entry_fails, self.call_fails, self.calls = entry_fails, call_fails, 0

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.calls += 1
        if self.call_fails:
            self.call_fails -= 1
            raise TransientError("SQS delete_message_batch: ServiceUnavailable")
        if self.entry_fails:
            self.entry_fails -= 1
            first, *rest = receipt_handles
            return [EntryFailure(first, "InternalError", "injected", False), *super().delete(rest)]
        return super().delete(receipt_handles)


def received(queue: InMemoryQueue, n: int) -> list[Message]:
    queue.send_batch([f"body {i}" for i in range(n)])
    return queue.receive(10, 0, 30)


def test_server_side_entry_failures_are_retried_with_the_injected_sleep() -> None:
    queue, sleeps = FlakyDeletes(entry_fails=2), []
    acker = Acker(queue, attempts=3, sleep=sleeps.append)
    result = acker.delete(received(queue, 3))
    acker.close()
    assert (result.deleted, result.failures) == (3, [])
    assert queue.calls == 3 and len(sleeps) == 2


def test_entries_still_failing_after_the_attempts_are_left_to_redelivery() -> None:
    queue = FlakyDeletes(entry_fails=10)
    acker = Acker(queue, attempts=3, sleep=lambda s: None)
    result = acker.delete(received(queue, 3))
    acker.close()
    assert (result.deleted, result.failures) == (2, ["InternalError: injected"])
    assert queue.calls == 3


def test_a_failed_call_is_not_retried_again() -> None:
    queue, sleeps = FlakyDeletes(call_fails=1), []
    acker = Acker(queue, attempts=3, sleep=sleeps.append)
    result = acker.delete(received(queue, 3))
    acker.close()
    assert result.deleted == 0 and len(result.failures) == 3
    assert "ServiceUnavailable" in result.failures[0]
    assert queue.calls == 1 and sleeps == []
