"""An object's first bytes tell which JSON records Spark's reader would skip, before any read."""

from __future__ import annotations

import gzip

import pytest

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read.sniff import CONCATENATED, PER_LINE, cut_short, records_cut, what_it_is
from tests.fakes import T0

pytestmark = pytest.mark.unit
FIREHOSE = b'{"a":1}{"a":2}{"a":3}'


@pytest.mark.parametrize(("first", "multiline", "why"), [
    (FIREHOSE, False, CONCATENATED),
    (gzip.compress(FIREHOSE, mtime=0), False, CONCATENATED),
    (gzip.compress(FIREHOSE * 20_000, mtime=0)[:4096], False, CONCATENATED),  # the sniff's cut of a big one
    (b'\xef\xbb\xbf {"a": "}{"} {"a": 2}\n', False, CONCATENATED),  # BOM, braces inside a string
    (b'[{"a":1}][{"a":2}]', True, CONCATENATED),
    (b'{"a":1}\n{"a":2}\n', True, PER_LINE),  # JSON Lines under multiLine=true: the first only
    (b'{"a":1}\r\n{"a":2}\r\n', False, None),  # JSON Lines: every record read
    (b'[{"a":1},{"a":2}]\n', False, None),  # Spark reads each element of a top-level array
    (b'{\n  "a": 1\n}\n', True, None),  # one multi-line document
    (b'{"a":1}{"a":', False, CONCATENATED),  # cut off by the sniff after one whole record
    (b'{"a": 1, "b": "a first record longer than the sniff', False, None),  # too little to tell
    (b'{"a":1} trailing words\n', False, None),  # not a record: Spark's read judges the line
    (b"order_id,customer\n1,a\n", False, None),
    (b"\x1f\x8bnot really gzip", False, None),
    (b'{"n":' + b"[" * 5000 + b"]" * 5000 + b"}\n", False, None),  # deeper than Python parses
])
def test_records_spark_would_skip_are_named(first: bytes, multiline: bool, why: str | None) -> None:
    assert records_cut(first, multiline) == why


def test_cut_short_sets_aside_only_objects_whose_first_bytes_show_skipped_records() -> None:
    objs = [PlannedObject("b", k, None, None, 1, f"e{k}", T0, 0) for k in ("fh", "ok", "unread")]
    heads = {("b", "fh"): ObjectHead(21, "e", first=FIREHOSE),
             ("b", "ok"): ObjectHead(8, "e", first=b'{"a":1}\n'), ("b", "unread"): ObjectHead(8, "e")}
    assert cut_short(objs, heads, multiline=False) == {
        ("b", "fh"): ("corrupt", f"{CONCATENATED} (s3://b/fh)")}


GZIP_SAID = "gzip-compressed (its first bytes are b'\\x1f\\x8b\\x08\\x00'): name it with a .gz or .gzip"
AVRO_SAID = "an Avro container file (its first bytes are b'Obj\\x01'): load it with a table of its format"
ARRAY_SAID = ("starts with '[' and spans lines: one JSON document (or array), not one record per line: "
              "set --read-option multiLine=true")


@pytest.mark.parametrize(("first", "key", "said"), [
    (gzip.compress(b'{"a":1}\n', mtime=0), "in/a.json", GZIP_SAID),
    (b"\x28\xb5\x2f\xfd\x00", "in/a.json.zst", "zstd-compressed"),
    (b"Obj\x01\x04\x14avro.codec", "in/a.json", AVRO_SAID),
    (b"PAR1\x15\x04", "in/a.json", "a Parquet file"),
    (b'[\n  {"a": 1},\n  {"a": 2}\n]\n', "in/a.json", ARRAY_SAID),
    (b'{\n "a": 1\n}\n', "in/a.json", "starts with '{' and spans lines"),
])
def test_what_bytes_yielding_no_record_are_is_said_with_what_to_do(first: bytes, key: str, said: str) -> None:
    found = what_it_is(first, key, multiline=False)
    assert found is not None and said in found


def test_bytes_that_are_nothing_known_say_nothing() -> None:
    assert what_it_is(b"not json at all\n", "a.json", multiline=False) is None
    assert what_it_is(b'{\n "a": 1\n}\n', "a.json", multiline=True) is None  # already read as one document
