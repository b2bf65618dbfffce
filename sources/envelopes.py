"""Queue message bodies → ObjectEvents, for every envelope S3 events arrive in (S3 → SQS, S3 → SNS
raw or wrapped, EventBridge), each key decoded here, once (see `parse`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote_plus

from lakeinlet.errors import EnvelopeError
from lakeinlet.events import NULL_VERSION, WANTED, ObjectEvent
from lakeinlet.own import Location, OwnLocations
from lakeinlet.sources.validate import event_problem, shown

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


def parse(body: str | bytes, message_id: str = "?") -> Envelope:
    """Parse one message body: total over any bytes or text, every event it returns fits a
    changelog row (`validate.event_problem`).

    S3 → SQS and S3 → SNS (raw delivery) carry the S3 notification itself; S3 → SNS (wrapped)
    carries it as a JSON string in `Message`; EventBridge carries one event in `detail`. Keys are
    decoded per envelope: S3 notifications URL-encode keys (`quote_plus`: a space becomes `+`),
    EventBridge events carry the key as stored (AWS documents no encoding there, and LocalStack's
    percent-encoding of it is LocalStack's own), so decoding it would corrupt `+` and `%`.
    `{"Records": []}` is a notification with no events, as AWS's SDK readers take it.

    Raises:
        EnvelopeError: the body is not JSON, not an S3 event in an envelope known here, or one of
            its records does not fit a changelog row: the whole message is poison.
    """
    doc = _json(body, message_id)
    if isinstance(doc, dict) and doc.get("Type") == "Notification" and "Message" in doc:
        inner = _json(doc["Message"], message_id)
        return _s3_notification(inner, "sns", message_id)
    if isinstance(doc, dict) and doc.get("source") == "aws.s3" and "detail" in doc:
        where = f"message {message_id}: EventBridge event"
        return Envelope("eventbridge", (_checked(where, _eventbridge, doc),))
    return _s3_notification(doc, "s3", message_id)


def _json(text: Any, message_id: str) -> Any:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EnvelopeError(f"message {message_id}: body is not UTF-8 text ({exc.reason} at "
                                f"byte {exc.start}): {text[:80]!r}") from None
    if not isinstance(text, str):
        raise EnvelopeError(f"message {message_id}: expected a JSON string, found {shown(text)}")
    try:
        return json.loads(text)
    except RecursionError:  # json's C parser recurses per nesting level
        raise EnvelopeError(f"message {message_id}: body is JSON nested too deep to read: "
                            f"{text[:80]!r}") from None
    except ValueError as exc:
        raise EnvelopeError(f"message {message_id}: body is not JSON ({exc}): {text[:80]!r}") from exc


def _s3_notification(doc: Any, kind: str, message_id: str) -> Envelope:
    if isinstance(doc, dict) and doc.get("Event") == TEST_EVENT:
        return Envelope(kind, ())
    records = doc.get("Records") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        found = [k[:40] for k in sorted(doc)[:6]] if isinstance(doc, dict) else shown(doc)
        raise EnvelopeError(f"message {message_id}: expected an S3 event (`Records`, an SNS "
                            f"notification or an EventBridge event), found {found}")
    return Envelope(kind, tuple(
        _checked(f"message {message_id}: record {i} of {len(records)}", _record, rec, kind)
        for i, rec in enumerate(records, 1)))


def _checked(where: str, read: Callable[..., ObjectEvent], *args: Any) -> ObjectEvent:
    """The event `read(*args)` returns if it fits a changelog row; else EnvelopeError(`where`: why)."""
    try:
        event = read(*args)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EnvelopeError(f"{where}: {exc}") from None
    if problem := event_problem(event):
        named = isinstance(event.bucket, str) and isinstance(event.key, str)
        uri = f" ({shown(f's3://{event.bucket}/{event.key}')})" if named else ""
        raise EnvelopeError(f"{where}{uri}: {problem}")
    return event


def _record(rec: Any, kind: str) -> ObjectEvent:
    """The event one S3 record describes, its values as found (`event_problem` judges them);
    ValueError names a field that is absent or not where a record keeps it."""
    source = _at(rec, "eventSource", required=False)
    if source not in (None, "aws:s3"):
        raise ValueError(f"eventSource: expected aws:s3, found {shown(source)}")
    return ObjectEvent(
        bucket=_at(rec, "s3.bucket.name"), key=unquote_plus(_string(rec, "s3.object.key")),
        event_name=_string(rec, "eventName").removeprefix("s3:"), event_time=_time(rec, "eventTime"),
        size=_at(rec, "s3.object.size", required=False), etag=_at(rec, "s3.object.eTag", required=False),
        version_id=_version(_at(rec, "s3.object.versionId", required=False)),
        sequencer=_blank(_at(rec, "s3.object.sequencer", required=False)),
        region=_blank(_at(rec, "awsRegion", required=False)), envelope=kind)


def _eventbridge(doc: dict[str, Any]) -> ObjectEvent:
    """The event an EventBridge S3 event describes, as `_record` does for an S3 record."""
    return ObjectEvent(
        bucket=_at(doc, "detail.bucket.name"), key=_string(doc, "detail.object.key"),
        event_name=_eventbridge_name(_string(doc, "detail-type"), _at(doc, "detail")),
        event_time=_time(doc, "time"), size=_at(doc, "detail.object.size", required=False),
        etag=_at(doc, "detail.object.etag", required=False),
        version_id=_version(_at(doc, "detail.object.version-id", required=False)),
        sequencer=_blank(_at(doc, "detail.object.sequencer", required=False)),
        region=_blank(_at(doc, "region", required=False)), envelope="eventbridge")


def _at(doc: Any, path: str, required: bool = True) -> Any:
    """The value at a dotted `path` of JSON objects (None when absent and not `required`).

    Raises:
        ValueError: a step is not a JSON object, or a required value is absent.
    """
    value = doc
    for step in path.split("."):
        if not isinstance(value, dict):
            raise ValueError(f"{path}: expected an object holding {step!r}, found {shown(value)}")
        if step not in value:
            if required:
                raise ValueError(f"{path}: expected a value, found none")
            return None
        value = value[step]
    return value


def _string(doc: Any, path: str) -> str:
    value = _at(doc, path)
    if not isinstance(value, str):
        raise ValueError(f"{path}: expected a string, found {shown(value)}")
    return value


def _eventbridge_name(detail_type: str, detail: Any) -> str:
    """Map EventBridge's detail-type to the S3 notification event name (one vocabulary, so
    `--event-type` and removals mean the same in every envelope). A lifecycle rule's deletion is
    `LifecycleExpiration:*`, as S3 → SQS names it."""
    reason, deletion = _at(detail, "reason", False), _at(detail, "deletion-type", False)
    if detail_type == "Object Created":
        return "ObjectCreated:" + _named(EVENTBRIDGE_CREATED, reason, "Put")
    if detail_type == "Object Deleted":
        cause = "LifecycleExpiration:" if reason == LIFECYCLE_EXPIRATION else "ObjectRemoved:"
        return cause + _named(EVENTBRIDGE_DELETED, deletion, "Delete")
    return EVENTBRIDGE_OTHER.get(detail_type) or "EventBridge:" + detail_type.replace(" ", "")


def _named(names: dict[str, str], value: Any, default: str) -> str:
    return names.get(value, default) if isinstance(value, str) else default


def _version(value: Any) -> Any:
    """An object's version id, None for none (NULL_VERSION is none: two PUTs of one key while
    versioning is suspended both carry it, and must not share an event id)."""
    return None if value == NULL_VERSION else _blank(value)


def _blank(value: Any) -> Any:
    """None for an absent or empty string; any other value as found, for `event_problem` to judge."""
    return None if value is None or value == "" else value


def _time(doc: Any, path: str) -> datetime:
    """An ISO 8601 time with a zone, in UTC (which the changelog stores)."""
    text = _string(doc, path)
    try:
        ts = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{path}: expected an ISO 8601 time, found {shown(text)}") from None
    if ts.tzinfo is None:
        raise ValueError(f"{path}: expected a time zone, found none in {shown(text)}")
    try:
        return ts.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00-05:00 is in year 10000 in UTC
        raise ValueError(f"{path}: expected a time within years 1-9999 in UTC, found {shown(text)}") from None


@dataclass(frozen=True)
class EventFilter:
    """Which events become changelog rows: a bucket allow-list, event-name prefixes, and never
    an event under lakeinlet's own locations (`own`: its changelog, tables, ledgers...).

    An empty allow-list accepts every bucket (the queue policy is then the only gate).
    """

    buckets: frozenset[str] = frozenset()
    event_prefixes: tuple[str, ...] = WANTED
    own: OwnLocations = field(default_factory=OwnLocations)

    def own_location(self, event: ObjectEvent) -> Location | None:
        return self.own.owner(event.bucket, event.key)

    def bucket_allowed(self, event: ObjectEvent) -> bool:
        return not self.buckets or event.bucket in self.buckets

    def type_wanted(self, event: ObjectEvent) -> bool:
        return event.event_name.startswith(self.event_prefixes)
