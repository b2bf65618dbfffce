"""Text logs hold one line per record whatever a key, a body or an error holds: control characters,
newlines, ANSI escapes, line separators and lone surrogates are escaped, and a field's value cannot
forge another field; JSON lines stay writable with a lone surrogate in them."""

from __future__ import annotations

import io
import json
import logging

import pytest

from lakeinlet.logs import JsonFormatter, TextFormatter

pytestmark = pytest.mark.unit

FORGED_KEY = ("in/a.json\n12:00:00 ERROR   lakeinlet.sources.poller: forged"
              "\r\x1b[2K\x1b[31mred\u2028x\ud800\u202e")


def record(msg: str, *args: object, exc: bool = False, **fields: object) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError(f"bad key {FORGED_KEY}")
        except ValueError as err:
            exc_info = (type(err), err, err.__traceback__)
    rec = logging.LogRecord("lakeinlet.sources.poller", logging.WARNING, __file__, 1, msg, args, exc_info)
    rec.lakeinlet_fields = fields
    return rec


def assert_one_safe_line(text: str) -> None:
    assert "\n" not in text and "\r" not in text and "\x1b" not in text, repr(text)
    assert "\u2028" not in text and "\u202e" not in text, repr(text)
    text.encode("utf-8")  # a lone surrogate would raise here, as the stream write would


def test_a_key_in_the_message_or_a_field_stays_on_one_line() -> None:
    text = TextFormatter().format(record("poison message %s", FORGED_KEY, key=FORGED_KEY, error="x"))
    assert_one_safe_line(text)
    assert "in/a.json\\n12:00:00 ERROR" in text and "\\x1b[31mred\\u2028x\\ud800\\u202e" in text, text


def test_a_field_value_cannot_forge_another_field() -> None:
    text = TextFormatter().format(record("batch", key='a b level=ERROR rows="9"', rows=3, path="c:\\x"))
    assert text.endswith('key="a b level=ERROR rows=\\"9\\"" rows=3 path="c:\\\\x"'), text


def test_plain_values_keep_their_look() -> None:
    text = TextFormatter().format(record("batch", poll_batch="20261101T000000Z-abc-000001", rows=3))
    assert text.endswith("batch poll_batch=20261101T000000Z-abc-000001 rows=3"), text


def test_a_traceback_is_indented_so_no_line_of_it_passes_for_a_record() -> None:
    lines = TextFormatter().format(record("failed", exc=True)).splitlines()
    assert lines[0].endswith("failed") and all(line.startswith("  ") for line in lines[1:]), lines
    assert "\x1b" not in "".join(lines) and lines[-1].startswith("  12:00:00 ERROR"), lines  # indented


def test_a_json_line_with_a_lone_surrogate_is_still_written() -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    line = JsonFormatter().format(record("poison", key=FORGED_KEY))
    out.write(line)
    assert json.loads(line)["key"] == FORGED_KEY, line
