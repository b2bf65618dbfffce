"""The event source's ports: the queue and the changelog, defined by what the poller calls.

Values (frozen dataclasses), never SDK objects, cross these boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from lakeinlet.events import ReceivedEvent

MAX_BATCH_ENTRIES = 10
"""SQS accepts at most 10 entries per DeleteMessageBatch / ChangeMessageVisibilityBatch call."""


@dataclass(frozen=True)
class Message:
    """One received queue message: its body and the handle that acknowledges this receipt."""

    message_id: str
    receipt_handle: str
    body: str
    receive_count: int = 1


@dataclass(frozen=True)
class EntryFailure:
    """One entry of a batch call that failed (the rest of the call succeeded)."""

    receipt_handle: str
    code: str
    message: str
    sender_fault: bool


@dataclass(frozen=True)
class QueueDepths:
    """Approximate queue counts, and where its dead letters go (from the RedrivePolicy)."""

    visible: int
    in_flight: int
    delayed: int = 0
    dlq_arn: str | None = None
    max_receive_count: int | None = None


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


class Changelog(Protocol):
    """Where one poll batch becomes one commit."""

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        """Commit `rows` as one version (nothing for no rows); returns the head version."""
        ...


def chunks(items: Sequence[str], size: int = MAX_BATCH_ENTRIES) -> list[Sequence[str]]:
    """Split `items` into consecutive slices of at most `size` (SQS batch calls take 10)."""
    return [items[i:i + size] for i in range(0, len(items), size)]
