"""One open poll batch: messages parsed as they arrive into changelog rows and handles to ack."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from lakeinlet.errors import EnvelopeError
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.sources.envelopes import EventFilter, parse
from lakeinlet.sources.poison import Poison
from lakeinlet.sources.ports import Message


@dataclass
class OpenBatch:
    """Everything one changelog commit will hold, and the messages acknowledged after it.

    `ack` holds every parsed message (with or without rows); poison messages (EnvelopeError)
    are kept apart: they are never acknowledged, only moved to the DLQ (by the poller, or by
    SQS's redrive). Events under lakeinlet's own locations (`own`, by location) are acknowledged
    without a row: writing them would make the changelog feed on its own commits.
    An event id already in the batch (the same message received twice, or a duplicate
    notification) adds no row: one row per event id per batch; its message is still acked.
    """

    poll_batch: str
    event_filter: EventFilter
    opened_at: float | None = None
    rows: list[ReceivedEvent] = field(default_factory=list)
    ack: list[Message] = field(default_factory=list)
    poison: list[Poison] = field(default_factory=list)
    events: int = 0
    duplicates: int = 0
    test_events: int = 0
    unwanted: int = 0
    foreign: Counter[str] = field(default_factory=Counter)
    own: Counter[str] = field(default_factory=Counter)
    _event_ids: set[str] = field(default_factory=set)

    @property
    def messages(self) -> int:
        return len(self.ack) + len(self.poison)

    @property
    def skipped(self) -> int:
        """Events (and test messages) acknowledged without a row."""
        return self.test_events + self.unwanted + sum(self.foreign.values()) + sum(self.own.values())

    @property
    def first_poison_error(self) -> str | None:
        return self.poison[0].error if self.poison else None

    def add(self, msg: Message, received_at: datetime, now: float) -> Poison | None:
        """Parse one message into rows; returns it as Poison when it is not an event (never raises:
        one message's body can cost that message, never its batch)."""
        if self.opened_at is None:
            self.opened_at = now
        try:
            envelope = parse(msg.body, msg.message_id)
        except EnvelopeError as exc:
            return self._poisoned(msg, str(exc))
        except Exception as exc:
            # parse is total (tests/unit/test_parse_total.py); a gap found later must cost this
            # message, not the run and every message received with it
            return self._poisoned(msg, f"message {msg.message_id}: unexpected {type(exc).__name__} "
                                       f"reading the body: {str(exc)[:200]!r}")
        self.ack.append(msg)
        if not envelope.events:
            self.test_events += 1
        for event in envelope.events:
            self._add_event(event, msg.message_id, received_at)
        return None

    def _poisoned(self, msg: Message, error: str) -> Poison:
        self.poison.append(Poison(msg, error))
        return self.poison[-1]

    def _add_event(self, event: ObjectEvent, message_id: str, received_at: datetime) -> None:
        self.events += 1
        if (own := self.event_filter.own_location(event)) is not None:
            self.own[str(own)] += 1
        elif not self.event_filter.bucket_allowed(event):
            self.foreign[event.bucket] += 1
        elif not self.event_filter.type_wanted(event):
            self.unwanted += 1
        elif (event_id := event.event_id) in self._event_ids:
            self.duplicates += 1
        else:
            self._event_ids.add(event_id)
            self.rows.append(ReceivedEvent(event, message_id, received_at, self.poll_batch))

    def due(self, now: float, batch_size: int, batch_seconds: float) -> bool:
        """Full (batch_size rows or messages) or old (batch_seconds since its first message)."""
        if self.opened_at is None:
            return False
        full = len(self.rows) >= batch_size or len(self.ack) >= batch_size
        return full or now - self.opened_at >= batch_seconds

    @property
    def handles(self) -> list[str]:
        """Receipt handles of every message in the batch (acked and poison)."""
        return [m.receipt_handle for m in self.ack] + [p.message.receipt_handle for p in self.poison]

    def seconds_left(self, now: float, batch_seconds: float) -> float | None:
        return None if self.opened_at is None else self.opened_at + batch_seconds - now
