"""Envelope parsing from fixture files: every envelope, test events, removals, awkward keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeinlet.errors import EnvelopeError
from lakeinlet.sources.envelopes import EventFilter, parse

pytestmark = pytest.mark.unit

EVENTS = Path(__file__).parent.parent / "data" / "events"


def body(name: str) -> str:
    return (EVENTS / name).read_text(encoding="utf-8")


def test_s3_direct_put_carries_every_field() -> None:
    env = parse(body("s3_put.json"), "m1")
    assert env.kind == "s3"
    (ev,) = env.events
    assert (ev.bucket, ev.key, ev.event_name) == ("landing-bucket", "incoming/2026/11/01/orders-0001.json",
                                                  "ObjectCreated:Put")
    assert ev.event_time == datetime(2026, 11, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert (ev.size, ev.sequencer) == (1024, "0055AED6DCD90281E5")
    assert ev.etag == "d41d8cd98f00b204e9800998ecf8427e"
    assert (ev.version_id, ev.region) == ("3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", "eu-west-1")


def test_one_message_with_two_records_gives_two_events() -> None:
    events = parse(body("s3_two_records.json")).events
    assert [e.key for e in events] == ["a/one.csv", "a/two.csv"]
    assert events[1].version_id is None
    assert events[0].event_id != events[1].event_id


@pytest.mark.parametrize("name", ["s3_test_event.json", "sns_wrapped_test_event.json"])
def test_test_events_parse_to_no_events(name: str) -> None:
    assert parse(body(name)).events == ()


@pytest.mark.parametrize("name", ["s3_records_empty.json", "sns_wrapped_records_empty.json"])
def test_records_empty_is_a_notification_with_no_events(name: str) -> None:
    """AWS's SDK readers take `{"Records": []}` as no events, not a poison message for the DLQ."""
    assert parse(body(name), "m1").events == ()


def test_the_null_version_of_unversioned_puts_is_no_version() -> None:
    """Two PUTs of one key while versioning is suspended both say versionId "null": they are two
    events (their ids differ), and the loader tells the objects apart by etag."""
    first, second = parse(body("s3_null_version_two_puts.json")).events
    assert (first.version_id, second.version_id) == (None, None)
    assert first.event_id != second.event_id
    (eb,) = parse(body("eventbridge_null_version.json")).events
    assert eb.version_id is None


def test_object_removed_has_no_size_or_etag() -> None:
    (ev,) = parse(body("s3_removed.json")).events
    assert ev.is_removed and ev.event_name == "ObjectRemoved:Delete"
    assert (ev.size, ev.etag, ev.version_id) == (None, None, None)


def test_delete_marker_keeps_its_version_id() -> None:
    (ev,) = parse(body("s3_delete_marker.json")).events
    assert ev.event_name == "ObjectRemoved:DeleteMarkerCreated" and ev.version_id == "null-marker-version"


@pytest.mark.parametrize(("name", "key"), [
    ("s3_key_space.json", "reports/q1 summary.csv"),
    ("s3_key_plus.json", "c++/a+b.txt"),
    ("s3_key_percent.json", "100%/done%25.txt"),
    ("s3_key_unicode.json", "données/été 2026/日本.json"),
    ("moto_put.json", "a b+c%2B/é.txt"),
])
def test_keys_are_decoded_exactly_once(name: str, key: str) -> None:
    (ev,) = parse(body(name)).events
    assert ev.key == key


def test_a_1000_character_key_survives() -> None:
    (ev,) = parse(body("s3_key_long.json")).events
    assert len(ev.key) >= 1000
    assert ev.key == "p/" + "x y+z%" * 166 + "abcd"


def test_sns_wrapped_unwraps_the_message_and_decodes_once() -> None:
    env = parse(body("sns_wrapped.json"))
    assert env.kind == "sns"
    assert [e.key for e in env.events] == ["sns/wrapped file.json"]
    assert env.events[0].envelope == "sns"


def test_sns_raw_delivery_is_the_s3_notification_itself() -> None:
    (ev,) = parse(body("sns_raw.json")).events
    assert ev.key == "sns/raw file.json"


def test_eventbridge_created_keeps_the_key_as_stored() -> None:
    env = parse(body("eventbridge_created.json"))
    (ev,) = env.events
    assert env.kind == "eventbridge" and ev.envelope == "eventbridge"
    assert (ev.bucket, ev.key, ev.event_name, ev.size) == ("landing-bucket", "eb/a b+c.json",
                                                           "ObjectCreated:Put", 5)
    assert (ev.version_id, ev.sequencer) == ("IYV3p45BT0ac8hjHg1houSdS1a.Mro8e", "00617F08299329D189")


def test_eventbridge_deleted_maps_to_a_removal() -> None:
    (ev,) = parse(body("eventbridge_deleted.json")).events
    assert ev.event_name == "ObjectRemoved:DeleteMarkerCreated" and ev.size is None


@pytest.mark.parametrize(("name", "event_name", "key"), [
    ("s3_lifecycle_expiration.json", "LifecycleExpiration:Delete", "incoming/2026-10-01T00:00:00Z old.json"),
    ("sns_wrapped_lifecycle_delete_marker.json", "LifecycleExpiration:DeleteMarkerCreated",
     "incoming/expired file.json"),
    ("eventbridge_lifecycle_expiration.json", "LifecycleExpiration:DeleteMarkerCreated",
     "incoming/expired file.json"),
])
def test_a_lifecycle_expiration_is_a_removal_kept_by_default_in_every_envelope(
        name: str, event_name: str, key: str) -> None:
    """S3's ObjectRemoved types leave out a lifecycle rule's deletions: without these, an expired
    object's rows would outlive it with --on-delete remove-rows."""
    (ev,) = parse(body(name)).events
    assert (ev.event_name, ev.key) == (event_name, key)
    assert ev.is_removed and not ev.is_created and ev.size is None
    assert EventFilter().type_wanted(ev), "expected lifecycle expirations to become rows by default"


def test_a_lifecycle_expiration_through_sns_and_eventbridge_is_one_event() -> None:
    """The same expiration notified through SNS and through EventBridge has one event id, as a
    redelivery does."""
    (sns,) = parse(body("sns_wrapped_lifecycle_delete_marker.json")).events
    (eb,) = parse(body("eventbridge_lifecycle_expiration.json")).events
    assert sns.event_id == eb.event_id


def test_one_key_reads_the_same_from_every_envelope() -> None:
    """One PUT of a key with a space, `+`, `%` and non-ASCII letters: S3 → SQS and SNS URL-encode
    it, EventBridge carries it as stored; all three give the stored key, and one event id."""
    events = [parse(body(name)).events[0] for name in
              ("s3_key_mixed.json", "sns_wrapped_key_mixed.json", "eventbridge_key_mixed.json")]
    assert {e.key for e in events} == {"in/q1 report+final 100%/données été 日本.json"}
    assert {e.envelope for e in events} == {"s3", "sns", "eventbridge"}
    assert len({e.event_id for e in events}) == 1


def test_a_redelivered_event_gets_the_same_id() -> None:
    first, again = parse(body("sns_raw.json"), "m1").events[0], parse(body("sns_raw.json"), "m2").events[0]
    assert first.event_id == again.event_id
    assert first.event_id != parse(body("sns_wrapped.json")).events[0].event_id


@pytest.mark.parametrize(("name", "words"), [
    ("malformed.json", "not JSON"),
    ("not_s3_event.json", "expected an S3 event"),
    ("sns_wrapped_not_json.json", "not JSON"),
    ("s3_record_without_key.json", "s3.object.key: expected a value, found none"),
])
def test_bodies_that_are_not_s3_events_are_envelope_errors(name: str, words: str) -> None:
    with pytest.raises(EnvelopeError, match=words) as err:
        parse(body(name), "msg-42")
    assert "msg-42" in str(err.value)


def test_filter_allow_list_and_event_types() -> None:
    put = parse(body("s3_put.json")).events[0]
    restore = parse(body("s3_restore.json")).events[0]
    tags = parse(body("eventbridge_tags_added.json")).events[0]
    assert EventFilter().bucket_allowed(put)
    assert not EventFilter(frozenset({"other"})).bucket_allowed(put)
    assert EventFilter(frozenset({"landing-bucket"})).bucket_allowed(put)
    assert EventFilter().type_wanted(put)
    assert not EventFilter().type_wanted(restore)
    assert not EventFilter().type_wanted(tags)
    assert not EventFilter(event_prefixes=("ObjectRemoved:",)).type_wanted(put)


@pytest.mark.parametrize(("detail_type", "reason", "event_name"), [
    ("Object Deleted", "DeleteObject", "ObjectRemoved:DeleteMarkerCreated"),
    ("Object Deleted", "Lifecycle Expiration", "LifecycleExpiration:DeleteMarkerCreated"),
    ("Object Restore Completed", None, "ObjectRestore:Completed"),
    ("Object Storage Class Changed", None, "LifecycleTransition"),
    ("Object Access Tier Changed", None, "IntelligentTiering"),
    ("Object Tags Added", None, "ObjectTagging:Put"),
    ("Object ACL Updated", None, "ObjectAcl:Put"),
    ("Object Something New", None, "EventBridge:ObjectSomethingNew"),
])
def test_eventbridge_detail_types_take_the_s3_event_names(detail_type: str, reason: str | None,
                                                          event_name: str) -> None:
    """AWS's mapping table, so `--event-type` means the same whatever the envelope."""
    doc = json.loads(body("eventbridge_deleted.json"))
    doc["detail-type"], doc["detail"]["reason"] = detail_type, reason
    (ev,) = parse(json.dumps(doc)).events
    assert ev.event_name == event_name


S3_EVENT = '{"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", ' \
           '"eventTime": "2026-11-01T00:00:00Z", "s3": {"bucket": {"name": "bkt"}, "object": {"key": %s}}}]}'


@given(st.text(min_size=1, max_size=256))
def test_any_key_survives_s3_encoding_then_parse(key: str) -> None:
    for encoded in (quote_plus(key), quote_plus(key, safe="/")):
        (ev,) = parse(S3_EVENT % json.dumps(encoded)).events
        assert ev.key == key


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80))
def test_a_double_encoded_key_is_decoded_only_once(key: str) -> None:
    """Decoding twice would turn the sent `quote_plus(key)` back into `key`."""
    (ev,) = parse(S3_EVENT % json.dumps(quote(quote_plus(key)))).events
    assert ev.key == quote_plus(key)


EVENTBRIDGE_EVENT = '{"source": "aws.s3", "detail-type": "Object Created", "time": "2026-11-01T00:00:00Z", ' \
                    '"detail": {"bucket": {"name": "bkt"}, "object": {"key": %s, "etag": "e"}, ' \
                    '"reason": "PutObject"}}'
SNS_WRAPPED = '{"Type": "Notification", "Message": %s}'


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200))
def test_every_envelope_gives_the_stored_key(key: str) -> None:
    """S3 → SQS and SNS carry `quote_plus(key)` (a `/` kept), EventBridge the key itself."""
    s3 = S3_EVENT % json.dumps(quote_plus(key, safe="/"))
    bodies = (s3, SNS_WRAPPED % json.dumps(s3), EVENTBRIDGE_EVENT % json.dumps(key))
    assert [parse(b).events[0].key for b in bodies] == [key, key, key]
