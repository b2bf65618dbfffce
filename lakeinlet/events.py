"""The object event value that crosses every port, and its deterministic id."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

CREATED = "ObjectCreated"
REMOVED = "ObjectRemoved"
EXPIRED = "LifecycleExpiration"
REMOVALS = (REMOVED, EXPIRED)
"""Event-name prefixes of removals: S3's `ObjectRemoved` types leave out deletions by a
lifecycle rule, which S3 names `LifecycleExpiration` (EventBridge sends both as "Object Deleted")."""
WANTED = (CREATED + ":", REMOVED + ":", EXPIRED + ":")
"""The event types that become changelog rows by default, and that a bucket notification set up
by lakeinlet subscribes to: every other type is acknowledged with no row."""


NULL_VERSION = "null"
"""The version id S3 gives objects written while a bucket's versioning is off or suspended: no
version at all (every such PUT of a key carries it)."""

@dataclass(frozen=True)
class ObjectEvent:
    """One S3 object event, decoded from whichever envelope carried it.

    `key` is already URL-decoded (exactly once, by the envelope parser). `size` and `etag` are
    None for removals. `sequencer` and `version_id` are None where the sender gave none.
    """

    bucket: str
    key: str
    event_name: str
    event_time: datetime
    size: int | None = None
    etag: str | None = None
    version_id: str | None = None
    sequencer: str | None = None
    region: str | None = None
    envelope: str = "s3"

    @property
    def is_created(self) -> bool:
        return self.event_name.startswith(CREATED)

    @property
    def is_removed(self) -> bool:
        """Deleted by a request or expired by a lifecycle rule: both are removals."""
        return self.event_name.startswith(REMOVALS)

    @cached_property
    def event_id(self) -> str:
        """Deterministic id: the same object event delivered twice gets the same id.

        Computed once per event (the poller's duplicate check and the changelog row use it).
        Built from bucket, key, the most specific object identity the sender gave (version id,
        else sequencer, else etag, else event time) and the event name.
        """
        identity = self.version_id or self.sequencer or self.etag or _iso(self.event_time)
        raw = "\x1f".join((self.bucket, self.key, identity, self.event_name))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class ReceivedEvent:
    """An object event plus where and when it was received (the rest of a changelog row)."""

    event: ObjectEvent
    message_id: str
    received_at: datetime
    poll_batch: str


def _iso(ts: datetime) -> str:
    return ts.astimezone(UTC).isoformat(timespec="microseconds")
