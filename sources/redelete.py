"""Deletes left over: a committed batch's messages whose delete call failed (a timeout under load)
stay hidden and are deleted again, with a growing pause, before a drain may end; otherwise they
come back after the visibility timeout as duplicate changelog rows."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lakeinlet import logs
from lakeinlet.sources.acks import Acker, AckResult
from lakeinlet.sources.ports import Message
from lakeinlet.sources.visibility import VisibilityKeeper

log = logging.getLogger(__name__)
FIRST_PAUSE = 0.5
"""Seconds before the second delete of a leftover (doubled before each later one)."""


class Leftovers:
    """Committed messages still to delete: the heartbeat keeps them hidden while `rounds` more
    deletes are tried; then they are let go (the queue redelivers them: duplicates, counted)."""

    def __init__(self, acker: Acker, keeper: VisibilityKeeper, rounds: int,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._acker, self._keeper, self._rounds = acker, keeper, max(1, rounds)
        self._clock, self._sleep = clock, sleep
        self._held: dict[str, Message] = {}
        self._tries: dict[str, int] = {}
        self._due = 0.0
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._held)

    def settled(self, handles: Sequence[str], acks: AckResult) -> None:
        """A batch's deletes are over: its retriable leftovers are kept (and hidden), the rest let go."""
        with self._lock:
            for m in acks.retriable:
                self._held[m.receipt_handle] = m
                self._tries.setdefault(m.receipt_handle, 0)
            self._due = min(self._due, self._clock()) if self._held else self._due
        self._keeper.release([h for h in handles if h not in self._held])

    def retry(self, summary: Any) -> bool:
        """Delete the leftovers again when due (the loop's thread); True while some are left."""
        with self._lock:
            if not self._held or self._clock() < self._due:
                return bool(self._held)
            todo = list(self._held.values())
        acks = self._acker.delete(todo)
        left = {m.receipt_handle for m in acks.retriable}
        summary.acked += acks.acked
        summary.superseded += acks.superseded
        summary.delete_failures -= acks.acked + acks.superseded
        with self._lock:
            tries = 0
            for m in todo:
                tries = self._tries[m.receipt_handle] = self._tries[m.receipt_handle] + 1
                if m.receipt_handle not in left or tries >= self._rounds:
                    self._held.pop(m.receipt_handle)
                    self._tries.pop(m.receipt_handle)
            gone = [m.receipt_handle for m in todo if m.receipt_handle not in self._held]
            self._due = self._clock() + FIRST_PAUSE * 2 ** tries
        self._keeper.release(gone)
        logs.event(log, "deletes retried", level=logging.WARNING if left else logging.INFO,
                   deleted=acks.acked + acks.superseded, still_left=len(left), retrying=len(self._held))
        return bool(self._held)

    def settle(self, summary: Any) -> None:
        """At the end of a run: every round left, now (pausing between them)."""
        while self.retry(summary):
            self._sleep(max(0.0, min(5.0, self._due - self._clock())))
