"""Hostile bodies (tests/data/events/hostile/): each is poison as a whole message, with one line
naming the message, the record and the field, never another exception out of `parse`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lakeinlet.errors import EnvelopeError
from lakeinlet.sources.envelopes import parse

pytestmark = pytest.mark.unit

HOSTILE = Path(__file__).parent.parent / "data" / "events" / "hostile"
FIELD_WORDS = {"key_": "key", "size_": "size: expected an integer", "sequencer_": "sequencer:",
               "etag_": "etag:", "region_": "region:", "version_id_": "version_id:",
               "event_time_": "eventTime:", "event_name_": "eventName:", "bucket_": "bucket:",
               "second_record_": "record 2 of 2", "sns_wrapped_": "sequencer:",
               "eventbridge_size": "size: expected an integer", "eventbridge_time": "time: expected",
               "eventbridge_bucket": "bucket: expected an S3 bucket name"}
NESTED_DEEP = "[" * 100_000 + "]" * 100_000  # 200 KB: generated rather than stored


def hostile_files() -> list[Path]:
    return sorted(HOSTILE.glob("*.json"))


def words_for(path: Path) -> str:
    return next(w for prefix, w in FIELD_WORDS.items() if path.stem.startswith(prefix))


@pytest.mark.parametrize("path", hostile_files(), ids=lambda p: p.stem)
def test_a_hostile_body_is_poison_naming_the_message_and_the_field(path: Path) -> None:
    with pytest.raises(EnvelopeError) as err:
        parse(path.read_text(encoding="utf-8"), "msg-7")
    text = str(err.value)
    assert text.startswith("message msg-7: ") and words_for(path) in text, text
    assert "\n" not in text and len(text) < 400, f"expected one short line, found {text!r}"


def test_the_fixture_folder_holds_every_case_the_issue_names() -> None:
    stems = {p.stem for p in hostile_files()}
    for case in ("key_lone_surrogate", "sequencer_dict", "etag_number", "region_dict", "version_id_list",
                 "size_2_70", "size_negative", "size_float", "size_bool", "event_time_9999_offset",
                 "event_time_no_zone", "bucket_number", "bucket_invalid_name"):
        assert case in stems, f"expected tests/data/events/hostile/{case}.json"


@pytest.mark.parametrize("body", [NESTED_DEEP, '{"a": ' * 50_000 + "1" + "}" * 50_000,
                                  json.dumps({"Type": "Notification", "Message": NESTED_DEEP})],
                         ids=["array", "object", "sns-message"])
def test_json_nested_100k_deep_is_poison_not_a_recursion_error(body: str) -> None:
    with pytest.raises(EnvelopeError, match="message m: body is JSON nested too deep to read"):
        parse(body, "m")


def test_a_bad_record_makes_its_whole_message_poison_and_says_which() -> None:
    with pytest.raises(EnvelopeError, match=r"record 2 of 2 \('s3://landing-bucket/incoming/second.json'\): "
                                            r"size: expected an integer 0-\d+ or null, found -5"):
        parse((HOSTILE / "second_record_invalid.json").read_text(), "m")


def test_an_event_time_is_kept_in_utc() -> None:
    """The changelog stores UTC: a time whose offset pushes it out of range is found here."""
    doc = json.loads((HOSTILE.parent / "s3_put.json").read_text())
    doc["Records"][0]["eventTime"] = "9999-12-31T20:00:00-03:00"
    (ev,) = parse(json.dumps(doc)).events
    assert ev.event_time.utcoffset() is not None and ev.event_time.utcoffset().total_seconds() == 0
    assert ev.event_time.isoformat() == "9999-12-31T23:00:00+00:00"


@pytest.mark.parametrize(("body", "words"), [
    (b'{"Records": [\xff]}', "body is not UTF-8 text"),
    (b"\xed\xa0\x80", "body is not UTF-8 text"),
    ('{"Records": [{"s3": []}]}',
     "record 1 of 1: s3.bucket.name: expected an object holding 'bucket', found an array"),
    ('{"Records": "x"}', "expected an S3 event"),
    ('{"Type": "Notification", "Message": {"Records": []}}', "expected a JSON string, found an object"),
    ('{"source": "aws.s3", "detail": 1}', "EventBridge event: detail.bucket.name: expected an object"),
])
def test_other_shapes_are_poison_in_one_line(body: str | bytes, words: str) -> None:
    with pytest.raises(EnvelopeError, match="message m: .*" + words.replace("(", r"\(").replace(")", r"\)")):
        parse(body, "m")


def test_a_body_of_256_kib_is_read_whole_as_rows_or_poison() -> None:
    """SQS's largest body: a key that long names no S3 object (poison); as many records, rows."""
    doc = json.loads((HOSTILE.parent / "s3_put.json").read_text())
    doc["Records"][0]["s3"]["object"]["key"] = "k" * (256 * 1024 - 1200)
    too_long = r"record 1 of 1 \(.*\.\.\.\): key: expected 1-1024 UTF-8 bytes, found 260944"
    with pytest.raises(EnvelopeError, match=too_long):
        parse(json.dumps(doc), "m")
    doc["Records"][0]["s3"]["object"]["key"] = "k"
    doc["Records"] *= 256 * 1024 // len(json.dumps(doc))
    body = json.dumps(doc)
    assert 200 * 1024 < len(body) <= 256 * 1024 and len(parse(body).events) == len(doc["Records"])
