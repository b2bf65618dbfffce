"""Queue message bodies → ObjectEvents, for every envelope S3 events arrive in (S3 → SQS, S3 → SNS
raw or wrapped, EventBridge), each key decoded here, once (see `parse`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote_plus

from lakeinlet.errors import EnvelopeError
from lakeinlet.events import NULL_VERSION, WANTED, ObjectEvent

TEST_EVENT = "s3:TestEvent"
EVENTBRIDGE_CREATED = {"PutObject": "Put", "CopyObject": "Copy", "PostObject": "Post",
                       "CompleteMultipartUpload": "CompleteMultipartUpload"}
EVENTBRIDGE_DELETED = {"Delete Marker Created": "DeleteMarkerCreated",
                       "Permanently Deleted": "Delete"}
LIFECYCLE_EXPIRATION = "Lifecycle Expiration"
"""The `reason` of an "Object Deleted" event that a lifecycle rule caused (else DeleteObject)."""
EVENTBRIDGE_OTHER = {"Object Restore Initiated": "ObjectRestore:Post",
                     "Object Restore Completed": "ObjectRestore:Completed",
                     "Object Restore Expired": "ObjectRestore:Delete",
                     "Object Storage Class Changed": "LifecycleTransition",
                     "Object Access Tier Changed": "IntelligentTiering",
                     "Object Tags Added": "ObjectTagging:Put", "Object Tags Deleted": "ObjectTagging:Delete",
                     "Object ACL Updated": "ObjectAcl:Put"}
"""AWS's table "Amazon EventBridge mapping": detail-type → S3 notification event name."""


@dataclass(frozen=True)
class Envelope:
    """What one message held: its envelope kind and its object events (none for a test event)."""

    kind: str
    events: tuple[ObjectEvent, ...]


def parse(body: str, message_id: str = "?") -> Envelope:
    """Parse one message body.

    S3 → SQS and S3 → SNS (raw delivery) carry the S3 notification itself; S3 → SNS (wrapped)
    carries it as a JSON string in `Message`; EventBridge carries one event in `detail`. Keys are
    decoded per envelope: S3 notifications URL-encode keys (`quote_plus`: a space becomes `+`),
    EventBridge events carry the key as stored (AWS documents no encoding there, and LocalStack's
    percent-encoding of it is LocalStack's own), so decoding it would corrupt `+` and `%`.
    `{"Records": []}` is a notification with no events, as AWS's SDK readers take it.

    Raises:
        EnvelopeError: the body is not JSON, or not an S3 event in an envelope known here.
    """
    doc = _json(body, message_id)
    if isinstance(doc, dict) and doc.get("Type") == "Notification" and "Message" in doc:
        inner = _json(doc["Message"], message_id)
        return _s3_notification(inner, "sns", message_id)
    if isinstance(doc, dict) and doc.get("source") == "aws.s3" and "detail" in doc:
        return Envelope("eventbridge", (_eventbridge(doc, message_id),))
    return _s3_notification(doc, "s3", message_id)


def _json(text: Any, message_id: str) -> Any:
    if not isinstance(text, str):
        raise EnvelopeError(f"message {message_id}: expected a JSON string, found {type(text).__name__}")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise EnvelopeError(f"message {message_id}: body is not JSON ({exc}): {text[:80]!r}") from exc


def _s3_notification(doc: Any, kind: str, message_id: str) -> Envelope:
    if isinstance(doc, dict) and doc.get("Event") == TEST_EVENT:
        return Envelope(kind, ())
    records = doc.get("Records") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        found = sorted(doc)[:6] if isinstance(doc, dict) else type(doc).__name__
        raise EnvelopeError(f"message {message_id}: expected an S3 event (`Records`, an SNS "
                            f"notification or an EventBridge event), found {found}")
    return Envelope(kind, tuple(_record(r, kind, message_id) for r in records))


def _record(rec: Any, kind: str, message_id: str) -> ObjectEvent:
    try:
        obj, source = rec["s3"]["object"], rec.get("eventSource", "aws:s3")
        if source != "aws:s3":
            raise EnvelopeError(f"message {message_id}: expected eventSource aws:s3, found {source!r}")
        return ObjectEvent(
            bucket=str(rec["s3"]["bucket"]["name"]), key=unquote_plus(str(obj["key"])),
            event_name=str(rec["eventName"]).removeprefix("s3:"),
            event_time=_time(rec["eventTime"]), size=_int(obj.get("size")), etag=obj.get("eTag"),
            version_id=_version(obj.get("versionId")), sequencer=obj.get("sequencer") or None,
            region=rec.get("awsRegion") or None, envelope=kind)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EnvelopeError(f"message {message_id}: S3 record without a valid {exc}") from exc


def _eventbridge(doc: dict[str, Any], message_id: str) -> ObjectEvent:
    try:
        detail, obj = doc["detail"], doc["detail"]["object"]
        return ObjectEvent(
            bucket=str(detail["bucket"]["name"]), key=str(obj["key"]),
            event_name=_eventbridge_name(str(doc["detail-type"]), detail),
            event_time=_time(doc["time"]), size=_int(obj.get("size")), etag=obj.get("etag"),
            version_id=_version(obj.get("version-id")), sequencer=obj.get("sequencer") or None,
            region=doc.get("region") or None, envelope="eventbridge")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EnvelopeError(f"message {message_id}: EventBridge S3 event without a valid {exc}") from exc


def _eventbridge_name(detail_type: str, detail: dict[str, Any]) -> str:
    """Map EventBridge's detail-type to the S3 notification event name (one vocabulary, so
    `--event-type` and removals mean the same in every envelope). A lifecycle rule's deletion is
    `LifecycleExpiration:*`, as S3 → SQS names it."""
    if detail_type == "Object Created":
        return "ObjectCreated:" + EVENTBRIDGE_CREATED.get(str(detail.get("reason")), "Put")
    if detail_type == "Object Deleted":
        cause = "LifecycleExpiration:" if detail.get("reason") == LIFECYCLE_EXPIRATION else "ObjectRemoved:"
        return cause + EVENTBRIDGE_DELETED.get(str(detail.get("deletion-type")), "Delete")
    return EVENTBRIDGE_OTHER.get(detail_type) or "EventBridge:" + detail_type.replace(" ", "")


def _version(value: Any) -> str | None:
    """An object's version id, None for none (NULL_VERSION is none: two PUTs of one key while
    versioning is suspended both carry it, and must not share an event id)."""
    return None if not value or value == NULL_VERSION else str(value)


def _time(text: Any) -> datetime:
    ts = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    if ts.tzinfo is None:
        raise ValueError("eventTime (no time zone)")
    return ts


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


@dataclass(frozen=True)
class EventFilter:
    """Which events become changelog rows: a bucket allow-list and event-name prefixes.

    An empty allow-list accepts every bucket (the queue policy is then the only gate).
    """

    buckets: frozenset[str] = frozenset()
    event_prefixes: tuple[str, ...] = WANTED

    def bucket_allowed(self, event: ObjectEvent) -> bool:
        return not self.buckets or event.bucket in self.buckets

    def type_wanted(self, event: ObjectEvent) -> bool:
        return event.event_name.startswith(self.event_prefixes)
