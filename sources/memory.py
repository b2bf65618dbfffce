"""An in-process queue with SQS semantics (visibility timeouts, receipt handles, redrive to a DLQ):
the contract suite runs the same tests over it and the SQS adapter; benchmarks use it to time the
poller's own code without an emulator in the way."""

from __future__ import annotations

import heapq
import itertools
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from lakeinlet.queues import QueueDepths
from lakeinlet.sources.ports import EntryFailure, Message, MessageAttribute

INVALID = "ReceiptHandleIsInvalid"


@dataclass
class _Record:
    message_id: str
    body: str
    receive_count: int = 0
    handle: str | None = None
    visible_at: float = 0.0
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict)


class InMemoryQueue:
    """A thread-safe queue; messages received more than `max_receive_count` times move to `dlq`."""

    def __init__(self, *, max_receive_count: int | None = None, dlq: InMemoryQueue | None = None,
                 clock: Callable[[], float] = time.monotonic, name: str = "memory") -> None:
        self.name = name
        self._max_receive, self.dlq = max_receive_count, dlq
        self._clock = clock
        self._cond = threading.Condition()
        self._visible: deque[_Record] = deque()
        self._hidden: list[tuple[float, int, _Record]] = []  # (visible_at, tiebreak, record)
        self._by_handle: dict[str, _Record] = {}
        self._tiebreak = itertools.count()

    def send_batch(self, bodies: Sequence[str]) -> list[str]:
        """Enqueue messages; returns their ids."""
        return self._enqueue([_Record(uuid.uuid4().hex, body) for body in bodies])

    def send(self, messages: Sequence[Message]) -> list[EntryFailure]:
        """Enqueue copies of `messages` (body and attributes) as new messages."""
        self._enqueue([_Record(uuid.uuid4().hex, m.body, attributes=dict(m.attributes))
                       for m in messages])
        return []

    def _enqueue(self, records: list[_Record]) -> list[str]:
        with self._cond:
            self._visible.extend(records)
            self._cond.notify_all()
        return [r.message_id for r in records]

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        deadline = self._clock() + wait_seconds
        with self._cond:
            while True:
                self._expire()
                taken = [self._take(visibility_timeout) for _ in range(min(max_messages, 10))
                         if self._visible]
                out = [m for m in taken if m is not None]
                remaining = deadline - self._clock()
                if out or remaining <= 0:
                    return out
                wake = self._hidden[0][0] - self._clock() if self._hidden else remaining
                self._cond.wait(max(0.001, min(remaining, wake)))

    def _take(self, visibility_timeout: int) -> Message | None:
        rec = self._visible.popleft()
        if self._max_receive is not None and rec.receive_count >= self._max_receive:
            if self.dlq is not None:  # SQS moves it on the receive that would exceed the count
                self.dlq._enqueue([_Record(rec.message_id, rec.body, attributes=rec.attributes)])
            return None
        rec.receive_count += 1
        rec.handle = f"{rec.message_id}.{uuid.uuid4().hex}"
        self._by_handle[rec.handle] = rec
        self._hide(rec, visibility_timeout)
        return Message(rec.message_id, rec.handle, rec.body, rec.receive_count, dict(rec.attributes))

    def _hide(self, rec: _Record, seconds: float) -> None:
        rec.visible_at = self._clock() + seconds
        heapq.heappush(self._hidden, (rec.visible_at, next(self._tiebreak), rec))

    def _expire(self) -> None:
        now = self._clock()
        while self._hidden and self._hidden[0][0] <= now:
            visible_at, _, rec = heapq.heappop(self._hidden)
            if rec.handle is not None and rec.visible_at == visible_at:  # not deleted, not re-hidden
                self._by_handle.pop(rec.handle, None)
                rec.handle = None
                self._visible.append(rec)

    def change_visibility(self, receipt_handles: Sequence[str], timeout: int) -> list[EntryFailure]:
        failures = []
        with self._cond:
            self._expire()
            for handle in receipt_handles:
                rec = self._by_handle.get(handle)
                if rec is None:
                    failures.append(EntryFailure(handle, INVALID, "receipt handle is not current", True))
                else:
                    self._hide(rec, timeout)
            self._cond.notify_all()
        return failures

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        failures = []
        with self._cond:
            for handle in receipt_handles:
                rec = self._by_handle.pop(handle, None)
                if rec is None:
                    failures.append(EntryFailure(handle, INVALID, "receipt handle is not current", True))
                else:
                    rec.handle = None
        return failures

    def depths(self) -> QueueDepths:
        with self._cond:
            self._expire()
            dlq = f"memory:{self.dlq.name}" if self.dlq is not None else None
            return QueueDepths(len(self._visible), len(self._by_handle), 0, dlq, self._max_receive)
