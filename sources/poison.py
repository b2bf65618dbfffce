"""Poison messages (bodies that are not events): every one logged, at most N lines a minute, and
with `--poison dlq` moved to the DLQ at once: sent (body and attributes as received, the parse
error added), then deleted from the queue, never the reverse.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lakeinlet import logs
from lakeinlet.errors import LakeinletError
from lakeinlet.sources.acks import Acker, AckResult
from lakeinlet.sources.ports import (
    MAX_BATCH_ENTRIES,
    MAX_MESSAGE_ATTRIBUTES,
    DeadLetterQueue,
    Message,
    MessageAttribute,
    Queue,
    chunks,
)

log = logging.getLogger(__name__)

ERROR_ATTRIBUTE = "lakeinlet.poison_error"
"""Message attribute that carries the parse error on a message moved to the DLQ."""
MAX_MESSAGE_BYTES = 262_144
"""SQS's size limit for body plus attributes (256 KiB, the limit most queues still have)."""
MAX_BATCH_BYTES = 262_144
"""SQS's limit on one SendMessageBatch call: every entry's body and attributes together."""
MAX_ERROR_CHARS = 1024
MOVE_TRIES = 3
"""Failed moves of one message in one run before it is left to SQS's redrive."""


@dataclass(frozen=True)
class Poison:
    """A received message that is not an event, and why."""

    message: Message
    error: str


class RateLimitedLog:
    """Logs at most `per_minute` lines a minute; the next line (or `flush`) says how many were
    suppressed meanwhile, so a flood of poison neither floods the log nor goes unseen."""

    def __init__(self, logger: logging.Logger, what: str, per_minute: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log, self._what, self._per_minute, self._clock = logger, what, per_minute, clock
        self._window, self._lines, self._pending = clock(), 0, 0
        self.suppressed = 0

    def event(self, name: str, level: int, **fields: Any) -> None:
        now = self._clock()
        if now - self._window >= 60:
            self._window, self._lines = now, 0
        if self._lines >= self._per_minute:
            self._pending += 1
            self.suppressed += 1
            return
        self._lines += 1
        extra = {"suppressed_before": self._pending} if self._pending else {}
        self._pending = 0
        logs.event(self._log, name, level, **fields, **extra)

    def flush(self) -> None:
        """Report lines suppressed since the last one logged (at the end of a run)."""
        if self._pending:
            logs.event(self._log, f"{self._what} log lines suppressed", logging.WARNING,
                       suppressed=self._pending)
            self._pending = 0


def with_error(msg: Message, error: str) -> Message:
    """`msg` with the parse error as one more attribute, when SQS's limits leave room for it
    (at most 10 attributes, 256 KiB in all); otherwise unchanged: the originals win."""
    attr = MessageAttribute("String", error[:MAX_ERROR_CHARS])
    size = msg.size()
    room = MAX_MESSAGE_BYTES - size - len(ERROR_ATTRIBUTE) - attr.size()
    if len(msg.attributes) >= MAX_MESSAGE_ATTRIBUTES or room < 0:
        log.warning("poison message %s: no room for the %s attribute (%d attributes, %d bytes)",
                    msg.message_id, ERROR_ATTRIBUTE, len(msg.attributes), size)
        return msg
    return dataclasses.replace(msg, attributes={**msg.attributes, ERROR_ATTRIBUTE: attr})


def sized_chunks(messages: Sequence[Message], max_bytes: int = MAX_BATCH_BYTES) -> list[list[Message]]:
    """Consecutive chunks of at most 10 messages and `max_bytes` in all (one SendMessageBatch
    call each); a message larger than `max_bytes` alone, for SQS to judge on its own."""
    out: list[list[Message]] = []
    size = 0
    for msg in messages:
        if not out or len(out[-1]) == MAX_BATCH_ENTRIES or size + msg.size() > max_bytes:
            out.append([])
            size = 0
        out[-1].append(msg)
        size += msg.size()
    return out


@dataclass(frozen=True)
class MoveResult:
    """Messages moved (sent, then their receipts deleted), messages whose send failed (kept in
    the queue), whether some of those were returned to the queue for another try at once."""

    moved: int = 0
    failed: int = 0
    returned: bool = False
    acks: AckResult = field(default_factory=AckResult)


class PoisonMover:
    """Moves poison messages to `dlq`: one copy per message id, then deletes every receipt."""

    def __init__(self, queue: Queue, dlq: DeadLetterQueue, acker: Acker, tries: int = MOVE_TRIES) -> None:
        self._queue, self._dlq, self._acker, self._tries = queue, dlq, acker, tries
        self._failures: Counter[str] = Counter()

    def move(self, poison: Sequence[Poison]) -> MoveResult:
        """Send, then delete what was sent; a message whose send failed stays in the queue."""
        firsts = list({p.message.message_id: p for p in poison}.values())
        failed: set[str] = set()
        for chunk in sized_chunks([with_error(p.message, p.error) for p in firsts]):
            failed |= self._send(chunk)
        acks = self._acker.delete([p.message for p in poison if p.message.message_id not in failed])
        returned = self._give_back([p.message for p in poison if p.message.message_id in failed])
        return MoveResult(len(firsts) - len(failed), len(failed), returned, acks)

    def _send(self, chunk: Sequence[Message]) -> set[str]:
        """Send one chunk; returns the message ids whose send failed."""
        try:
            failures = self._dlq.send(chunk)
        except LakeinletError as exc:
            log.error("moving %d poison message(s) to the DLQ failed; they stay in the queue: %s",
                      len(chunk), exc)
            return {m.message_id for m in chunk}
        ids = {m.receipt_handle: m.message_id for m in chunk}
        for f in failures:
            log.error("moving poison message %s to the DLQ failed; it stays in the queue: %s: %s",
                      ids[f.receipt_handle], f.code, f.message)
        return {ids[f.receipt_handle] for f in failures}

    def _give_back(self, messages: Sequence[Message]) -> bool:
        """Make messages whose send failed visible again, so the next receipt tries again,
        until one failed `tries` times: that one is left to expire and to SQS's redrive."""
        self._failures.update({m.message_id for m in messages})
        again = [m for m in messages if self._failures[m.message_id] < self._tries]
        for m in messages:
            if self._failures[m.message_id] == self._tries:
                log.error("poison message %s: %d moves failed; left to the queue's redrive policy",
                          m.message_id, self._tries)
        for chunk in chunks([m.receipt_handle for m in again]):
            try:
                self._queue.change_visibility(chunk, 0)
            except LakeinletError as exc:  # they come back after their visibility timeout instead
                log.warning("returning poison messages to the queue failed: %s", exc)
        return bool(again)
