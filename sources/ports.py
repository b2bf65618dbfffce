"""The event source's ports, the queue and the changelog, defined by what the poller calls; values
(frozen dataclasses), never SDK objects, cross them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from lakeinlet.events import ReceivedEvent
from lakeinlet.queues import QueueDepths

T = TypeVar("T")

MAX_BATCH_ENTRIES = 10
"""SQS accepts at most 10 entries per DeleteMessageBatch / ChangeMessageVisibilityBatch call."""


MAX_MESSAGE_ATTRIBUTES = 10
"""SQS accepts at most 10 message attributes per message."""


@dataclass(frozen=True)
class MessageAttribute:
    """One SQS message attribute: `String…`/`Number…` types carry a string, `Binary…` bytes."""

    data_type: str
    string_value: str | None = None
    binary_value: bytes | None = None

    def size(self) -> int:
        """Bytes it counts towards the message size limit (type and value; add the name)."""
        value = self.binary_value or utf8(self.string_value or "")
        return len(utf8(self.data_type)) + len(value)


@dataclass(frozen=True)
class Message:
    """One received queue message: its body, message attributes, and the handle that
    acknowledges this receipt."""

    message_id: str
    receipt_handle: str
    body: str
    receive_count: int = 1
    attributes: Mapping[str, MessageAttribute] = field(default_factory=dict, hash=False)

    def size(self) -> int:
        """Bytes it counts towards SQS's size limits: body, and each attribute's name, type, value."""
        return len(utf8(self.body)) + sum(len(utf8(k)) + a.size() for k, a in self.attributes.items())


def utf8(text: str) -> bytes:
    """`text` as UTF-8; a lone surrogate (which SQS would refuse) is counted, not raised."""
    return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class EntryFailure:
    """One entry of a batch call that failed (the rest of the call succeeded)."""

    receipt_handle: str
    code: str
    message: str
    sender_fault: bool


class Queue(Protocol):
    """The queue as the poller uses it (SQS semantics: visibility timeouts, receipt handles)."""

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        """Long-poll up to `max_messages` (≤10) for up to `wait_seconds`; hide them for
        `visibility_timeout` seconds. Raises TransientError or TerminalError."""
        ...

    def change_visibility(self, receipt_handles: Sequence[str], timeout: int) -> list[EntryFailure]:
        """Set the visibility timeout of up to 10 received messages; returns per-entry failures."""
        ...

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        """Acknowledge up to 10 received messages; returns per-entry failures."""
        ...

    def depths(self) -> QueueDepths:
        """Approximate visible and in-flight counts and the redrive target."""
        ...


class DeadLetterQueue(Protocol):
    """Where poison messages are moved to when the poller moves them itself."""

    def send(self, messages: Sequence[Message]) -> list[EntryFailure]:
        """Send up to 10 messages (body and message attributes as given) as new messages;
        returns per-entry failures, keyed by each given message's receipt handle."""
        ...


class Changelog(Protocol):
    """Where one poll batch becomes one commit."""

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        """Commit `rows` as one version (nothing for no rows); returns the head version."""
        ...


def chunks(items: Sequence[T], size: int = MAX_BATCH_ENTRIES) -> list[Sequence[T]]:
    """Split `items` into consecutive slices of at most `size` (SQS batch calls take 10)."""
    return [items[i:i + size] for i in range(0, len(items), size)]
