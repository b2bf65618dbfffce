"""What compression an object's first bytes (or its Content-Encoding) show, judged against its key
before the read: Hadoop's line readers pick a codec by the key's suffix alone, so compressed bytes
under a plain key would load as garbage rows, and archives or foreign framings cannot load at all."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lakeinlet.incremental.model import CORRUPT, PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read.verdicts import Failed


@dataclass(frozen=True)
class Codec:
    """A compression (or archive) known by its leading bytes."""

    name: str
    magic: bytes
    suffixes: tuple[str, ...]
    """Key suffixes under which Spark decompresses it (empty: Spark cannot read it at all)."""
    why_not: str = ""
    """Why Spark cannot read it (codecs without suffixes)."""


CODECS = (
    Codec("gzip", b"\x1f\x8b", (".gz",)),
    Codec("bzip2", b"BZh", (".bz2",)),
    Codec("zstd", b"\x28\xb5\x2f\xfd", (".zst",)),
    Codec("lz4 frame", b"\x04\x22\x4d\x18", (), "Hadoop's .lz4 codec reads its own block framing, "
          "not the lz4 frame format the lz4 tool and libraries write"),
    Codec("snappy frame", b"\xff\x06\x00\x00sNaPpY", (), "Hadoop's .snappy codec reads its own block "
          "framing, not the snappy framing format"),
    Codec("zip", b"PK\x03\x04", (), "a zip archive holds files, not rows"),
)
ENCODINGS = {"gzip": "gzip", "x-gzip": "gzip", "bzip2": "bzip2", "zstd": "zstd"}
"""Content-Encoding values (RFC 9110 and common practice) → the codec they name."""
TAR_AT, TAR = 257, b"ustar"
FIX = "decompress it (or recompress it with gzip, bzip2 or zstd) and upload it again"


def codec_of(first: bytes | None, encoding: str | None) -> Codec | None:
    """The codec the object's first bytes show, else (bytes not read) the one its Content-Encoding
    names: bytes read are what Spark reads, whatever the header says."""
    if first:
        return next((c for c in CODECS if first.startswith(c.magic)), None)
    named = ENCODINGS.get((encoding or "").strip().lower())
    return next((c for c in CODECS if c.name == named), None)


def is_tar(first: bytes | None) -> bool:
    """Whether the bytes (gzip-compressed ones decompressed as far as they go) are a tar archive."""
    if first and first.startswith(b"\x1f\x8b"):
        try:
            first = zlib.decompressobj(47).decompress(first, TAR_AT + len(TAR))
        except zlib.error:
            return False
    return first is not None and first[TAR_AT:TAR_AT + len(TAR)] == TAR


def verdict(key: str, head: ObjectHead) -> str | None:
    """Why the object cannot be read as its key and bytes stand (None: Spark reads it), with the fix."""
    first = head.first
    if is_tar(first):
        return f"the object is a tar archive ('ustar' at byte {TAR_AT}): it holds files, not rows: " \
               "extract them and upload each one"
    codec = codec_of(first, head.content_encoding)
    if codec is None:
        return None
    how = f"first bytes {first[:4].hex()}" if first and first.startswith(codec.magic) else \
        f"Content-Encoding {head.content_encoding}"
    if not codec.suffixes:
        return f"the object is {codec.name}-compressed ({how}), which Spark cannot read: " \
               f"{codec.why_not}: {FIX}"
    if unsuffixed(key, head) is not None:
        return (f"the object is {codec.name}-compressed ({how}) but its key does not end in "
                f"{' or '.join(codec.suffixes)}, and Spark picks the codec by the key's suffix: "
                f"copy it to a key ending {codec.suffixes[0]} (Firehose: set the file extension "
                "format), or upload it uncompressed")
    return None


def unsuffixed(key: str, head: ObjectHead | None) -> Codec | None:
    """The codec Spark would decompress the object's bytes with, when its key lacks the codec's
    suffix (None: not compressed, not readable by Spark at all, a tar, or the suffix is there)."""
    if head is None or is_tar(head.first):
        return None
    codec = codec_of(head.first, head.content_encoding)
    if codec is None or not codec.suffixes or key.lower().endswith(codec.suffixes):
        return None
    return codec


def set_aside(objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead]) -> Failed:
    """The objects whose bytes Spark would not decompress (`verdict`), as `corrupt` with the fix."""
    out: Failed = {}
    for o in objs:
        head = heads.get((o.bucket, o.key))
        if head is not None and (why := verdict(o.key, head)):
            out[(o.bucket, o.key)] = (CORRUPT, f"{why} (s3://{o.bucket}/{o.key})")
    return out
