"""What an object's first bytes say: JSON records that Spark would read only the first of
(concatenated without newlines, or one per line under multiLine), before the read; what an object
that yielded no record really is (compressed, Avro, Parquet, one multi-line document), after."""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence

from lakeinlet.incremental.model import CORRUPT, PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead

FIRST_BYTES = 64 * 1024
"""Bytes of each JSON/CSV object read with its check before the read (one ranged GET, the HEAD's
answer included): enough for the first records of any object that is not one huge record."""
CONCATENATED = ("records are concatenated without newlines (Amazon Data Firehose's default), and "
                "Spark reads only the first record of each line: configure a newline delimiter on "
                "the stream (Firehose: processing configuration, AppendDelimiterToRecord), then "
                "upload the object again")
PER_LINE = ("records are one per line (JSON Lines), and multiLine=true reads only the first: drop "
            "--read-option multiLine=true for this table")


def text(first: bytes) -> str:
    """The first bytes as text: gzip (a whole first member or its start) decompressed."""
    if first[:2] == b"\x1f\x8b":
        try:
            first = zlib.decompressobj(47).decompress(first)
        except zlib.error:
            return ""
    return first.decode("utf-8", errors="replace").lstrip("\ufeff")


def records_cut(first: bytes, multiline: bool) -> str | None:
    """Why Spark's JSON reader would read fewer records than the object holds, from its first
    bytes (None: it would read them all, or the bytes cannot tell)."""
    doc = text(first).lstrip()
    if not doc.startswith(("{", "[")):
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(doc)
    except (ValueError, RecursionError):  # malformed, cut off by the sniff, or nested deeper than
        return None  # Python parses: Spark's read judges it
    rest = doc[end:]
    if not rest.strip():
        return None
    gap, after = rest[:len(rest) - len(rest.lstrip())], rest.lstrip()
    if not after.startswith(("{", "[")):
        return None
    if "\n" not in gap:
        return CONCATENATED
    return PER_LINE if multiline else None



def cut_short(objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead],
              multiline: bool) -> dict[Ref, tuple[str, str]]:
    """The JSON objects whose first bytes (read with their HEAD) hold records Spark's reader would
    skip: set aside as `corrupt` with why and what to do, never loaded short."""
    out = {}
    for o in objs:
        head = heads.get((o.bucket, o.key))
        if head is not None and head.first and (why := records_cut(head.first, multiline)):
            out[(o.bucket, o.key)] = (CORRUPT, f"{why} (s3://{o.bucket}/{o.key})")
    return out


MAGIC = ((b"\x1f\x8b", "gzip-compressed", (".gz", ".gzip")),
         (b"\x28\xb5\x2f\xfd", "zstd-compressed", (".zst",)),
         (b"BZh", "bzip2-compressed", (".bz2",)),
         (b"Obj\x01", "an Avro container file", ()), (b"PAR1", "a Parquet file", ()),
         (b"ORC", "an ORC file", ()), (b"PK\x03\x04", "a zip archive", ()))
"""Leading bytes of what is often read as text by mistake: the kind, and the suffixes that make
Spark decompress it (none: Spark's text readers cannot read it at all)."""


def what_it_is(first: bytes, key: str, multiline: bool) -> str | None:
    """What an object that yielded no record is, from its first bytes, and what to do (None:
    nothing recognised)."""
    for magic, kind, suffixes in MAGIC:
        if first.startswith(magic):
            if not suffixes:
                fix = "load it with a table of its format (--source-format)"
            elif not key.endswith(suffixes):
                fix = f"name it with a {' or '.join(suffixes)} suffix, which tells Spark to decompress it"
            else:
                fix = "this Spark's Hadoop cannot decompress it: decompress it, or compress it with gzip"
            return f"the object is {kind} (its first bytes are {first[:4]!r}): {fix}"
    doc = text(first).lstrip()
    if not multiline and doc[:1] in ("[", "{") and "\n" in doc.strip():
        return (f"the object starts with {doc[:1]!r} and spans lines: one JSON document (or array), "
                "not one record per line: set --read-option multiLine=true for this table")
    return None
