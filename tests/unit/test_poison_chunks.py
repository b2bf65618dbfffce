"""`--poison dlq` sends its SendMessageBatch calls within SQS's 256 KiB batch payload (bodies and
attributes, the parse error included): 10 entries or fewer, a message over the cap alone."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lakeinlet.sources.acks import Acker
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poison import Poison, PoisonMover
from lakeinlet.sources.ports import EntryFailure, Message, MessageAttribute

pytestmark = pytest.mark.unit

KIB = 1024
SQS_BATCH_CAP = 256 * KIB
"""SendMessageBatch: the entries' bodies and attributes together, at most (AWS's documented cap)."""


class CallRecordingDlq(InMemoryQueue):
    """Records the entries and bytes of each send call."""

    def __init__(self) -> None:
        super().__init__(name="dlq")
        self.calls: list[tuple[int, int]] = []

    def send(self, messages: Sequence[Message]) -> list[EntryFailure]:
        self.calls.append((len(messages), sum(m.size() for m in messages)))
        return super().send(messages)


def poison(queue: InMemoryQueue, sizes_kib: list[int]) -> list[Poison]:
    """Messages of these sizes in the queue (received, so they have handles), as poison."""
    attrs = {"origin": MessageAttribute("String", "x" * 100)}
    for i, kib in enumerate(sizes_kib):
        queue.send([Message(f"m{i}", "unsent", f"{i:03d}" + "x" * (kib * KIB - 3), attributes=attrs)])
    got: list[Message] = []
    while batch := queue.receive(10, 0, 30):
        got += batch
    return [Poison(m, "message ?: body is not JSON") for m in got]


def test_calls_stay_within_the_batch_payload_cap_and_a_large_message_goes_alone() -> None:
    queue, dlq = InMemoryQueue(), CallRecordingDlq()
    sizes = [60] * 6 + [300] + [1] * 12
    acker = Acker(queue, parallel=2)
    try:
        result = PoisonMover(queue, dlq, acker).move(poison(queue, sizes))
    finally:
        acker.close()
    assert (result.moved, result.failed) == (len(sizes), 0), result
    assert sum(n for n, _ in dlq.calls) == len(sizes), dlq.calls
    for entries, size in dlq.calls:
        assert entries <= 10 and (size <= SQS_BATCH_CAP or entries == 1), dlq.calls
    assert (1, pytest.approx(300 * KIB, rel=0.01)) in dlq.calls, "expected the 300 KiB message sent alone"
    assert (queue.depths().visible, queue.depths().in_flight) == (0, 0), "expected every message deleted"
