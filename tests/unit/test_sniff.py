"""An object's first bytes tell which JSON records Spark's reader would skip, before any read."""

from __future__ import annotations

import gzip

import pytest

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read.sniff import CONCATENATED, PER_LINE, cut_short, records_cut
from tests.fakes import T0

pytestmark = pytest.mark.unit
FIREHOSE = b'{"a":1}{"a":2}{"a":3}'


@pytest.mark.parametrize(("first", "multiline", "why"), [
    (FIREHOSE, False, CONCATENATED),
    (gzip.compress(FIREHOSE), False, CONCATENATED),
    (gzip.compress(FIREHOSE * 20_000)[:4096], False, CONCATENATED),  # the sniff's cut of a big one
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
])
def test_records_spark_would_skip_are_named(first: bytes, multiline: bool, why: str | None) -> None:
    assert records_cut(first, multiline) == why


def test_cut_short_sets_aside_only_objects_whose_first_bytes_show_skipped_records() -> None:
    objs = [PlannedObject("b", k, None, None, 1, f"e{k}", T0, 0) for k in ("fh", "ok", "unread")]
    heads = {("b", "fh"): ObjectHead(21, "e", first=FIREHOSE),
             ("b", "ok"): ObjectHead(8, "e", first=b'{"a":1}\n'), ("b", "unread"): ObjectHead(8, "e")}
    assert cut_short(objs, heads, multiline=False) == {
        ("b", "fh"): ("corrupt", f"{CONCATENATED} (s3://b/fh)")}
