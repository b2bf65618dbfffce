"""`parse` is total (property tests): any JSON, text or bytes, and S3-notification-shaped documents
whose every field is any JSON value, give an Envelope or an EnvelopeError, nothing else, and every
event returned makes a changelog row that the changelog's Arrow schema takes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lakeinlet.changelog.reader import changelog_table
from lakeinlet.changelog.schema import to_changelog_table
from lakeinlet.errors import EnvelopeError
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.sources.batch import OpenBatch
from lakeinlet.sources.envelopes import EventFilter, parse
from lakeinlet.sources.ports import Message

pytestmark = pytest.mark.unit

BOUNDED = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NOW = datetime(2026, 11, 1, tzinfo=UTC)
ABSENT = object()
"""A field left out of the document."""

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)  # lone surrogates too
PLAIN = st.text(max_size=30)
EDGE_NUMBERS = st.sampled_from([2**63 - 1, 2**63, 2**70, -1, -(2**63), 0.5, 1e308, float("inf"),
                                float("nan"), True, False])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | EDGE_NUMBERS | ANY_TEXT
ANY_JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(ANY_TEXT, inner, max_size=3), max_leaves=12)
ZONES = st.sampled_from([UTC, timezone(timedelta(hours=-12)), timezone(timedelta(hours=14))])
TIMES = st.builds(lambda d: d.isoformat(), st.datetimes(datetime(1000, 1, 1), timezones=ZONES))
VALID = {
    "bucket": st.sampled_from(["landing-bucket", "Legacy_Bucket.1", "a.b-c"]),
    "key": st.text(min_size=1, max_size=30),
    "eventName": st.sampled_from(["ObjectCreated:Put", "s3:ObjectRemoved:Delete", "ObjectTagging:Put"]),
    "eventTime": TIMES, "size": st.integers(0, 2**40), "eTag": PLAIN, "versionId": PLAIN | st.just("null"),
    "sequencer": PLAIN, "awsRegion": PLAIN, "eventSource": st.just("aws:s3"),
}
"""Values S3 could send."""
EDGE = {
    "bucket": st.sampled_from(["ab", "a" * 256, "..x", "b/c", "x" * 3 + "\n"]),
    "key": ANY_TEXT | st.sampled_from(["", "k" * 1025, "\ud800"]),
    "eventName": ANY_TEXT, "size": st.integers() | EDGE_NUMBERS,
    "eventTime": st.datetimes().map(lambda d: d.isoformat()) | st.sampled_from(
        ["9999-12-31T23:59:59-00:01", "0001-01-01T00:00:00+00:01", "2026-11-01", "now"]),
}
"""Values S3 never sends but a body's author may."""


@st.composite
def fields(draw: st.DrawFn) -> dict[str, Any]:
    """A valid value per field, then up to three replaced by an edge case or any JSON, or left out."""
    f = {name: draw(strategy) for name, strategy in VALID.items()}
    for name in draw(st.sets(st.sampled_from(sorted(VALID)), max_size=3)):
        f[name] = draw(EDGE.get(name, ANY_TEXT) | ANY_JSON | st.just(ABSENT))
    return f


def present(pairs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in pairs.items() if v is not ABSENT}


@st.composite
def s3_records(draw: st.DrawFn) -> dict[str, Any]:
    f = draw(fields())
    obj = present({"key": f["key"], "size": f["size"], "eTag": f["eTag"], "versionId": f["versionId"],
                   "sequencer": f["sequencer"]})
    bucket = present({"name": f["bucket"]})
    return present({"eventSource": f["eventSource"], "eventName": f["eventName"], "eventTime": f["eventTime"],
                    "awsRegion": f["awsRegion"], "s3": {"bucket": bucket, "object": obj}})


@st.composite
def eventbridge_events(draw: st.DrawFn) -> dict[str, Any]:
    f = draw(fields())
    obj = present({"key": f["key"], "size": f["size"], "etag": f["eTag"], "version-id": f["versionId"],
                   "sequencer": f["sequencer"]})
    detail = present({"bucket": present({"name": f["bucket"]}), "object": obj,
                      "reason": draw(st.sampled_from(["PutObject", "Lifecycle Expiration"]) | ANY_JSON),
                      "deletion-type": draw(ANY_JSON)})
    detail_type = draw(st.sampled_from(["Object Created", "Object Deleted", "Object Tags Added"]) | ANY_JSON)
    return present({"source": "aws.s3", "detail-type": detail_type, "time": f["eventTime"],
                    "region": f["awsRegion"], "detail": detail})


def notifications() -> st.SearchStrategy[str]:
    s3 = st.builds(lambda recs: json.dumps({"Records": recs}), st.lists(s3_records(), max_size=3))
    sns = st.builds(lambda body: json.dumps({"Type": "Notification", "Message": body}), s3)
    return s3 | sns | eventbridge_events().map(json.dumps)


def events_of(body: str | bytes) -> tuple[ObjectEvent, ...] | None:
    """The events `parse` returns (each a row both changelog builders take), None for poison."""
    try:
        events = parse(body, "m").events
    except EnvelopeError:
        return None
    rows = [ReceivedEvent(e, "m", NOW, "pb") for e in events]
    for build in (to_changelog_table, changelog_table):
        build(rows).validate(full=True)
    return events


def assert_rows_or_poison(body: str | bytes) -> None:
    """Envelope or EnvelopeError only; and a batch takes the message (bytes as a queue adapter
    that kept invalid UTF-8 as lone surrogates would hand them over) as rows or as poison."""
    events_of(body)
    text = body if isinstance(body, str) else body.decode("utf-8", "surrogateescape")
    poison = OpenBatch("pb", EventFilter()).add(Message("m", "h", text), NOW, 0.0)
    assert (poison is None) == (events_of(text) is not None), poison


@BOUNDED
@given(ANY_JSON)
def test_any_json_value_gives_rows_or_poison(value: Any) -> None:
    assert_rows_or_poison(json.dumps(value))


@BOUNDED
@given(st.text(st.characters(exclude_categories=()), max_size=400) | st.binary(max_size=400))
def test_any_text_or_bytes_gives_rows_or_poison(body: str | bytes) -> None:
    assert_rows_or_poison(body)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(notifications())
def test_notifications_whose_every_field_is_any_json_give_rows_or_poison(body: str) -> None:
    assert_rows_or_poison(body)


@BOUNDED
@given(st.sampled_from(["landing-bucket", "Legacy_Bucket.1"]), st.text(min_size=1, max_size=200),
       st.integers(0, 2**63 - 1) | st.none(), TIMES)
def test_valid_fields_are_never_poison(bucket: str, key: str, size: int | None, time: str) -> None:
    """The other side: whatever S3 could send is a row, as sent."""
    rec = {"eventName": "ObjectCreated:Put", "eventTime": time,
           "s3": {"bucket": {"name": bucket}, "object": {"key": quote_plus(key, safe="/"), "size": size}}}
    try:
        (ev,) = parse(json.dumps({"Records": [rec]})).events
    except EnvelopeError as exc:
        assert "in UTC" in str(exc), exc  # a time at the edge of year 1 or 9999 in its own zone
        return
    assert (ev.bucket, ev.key, ev.size) == (bucket, key, size)
