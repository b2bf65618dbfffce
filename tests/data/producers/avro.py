"""A minimal Avro object container writer (long, double, string, boolean and nullable unions of
them), so the corpus writes Kafka Connect's Avro bytes without a Spark job or another package."""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import Any

MAGIC = b"Obj\x01"


def _long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)  # zigzag
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _bytes(b: bytes) -> bytes:
    return _long(len(b)) + b


def _value(kind: Any, v: Any) -> bytes:
    if isinstance(kind, list):  # a union: the branch's index, then the value
        branch = kind.index("null") if v is None else next(i for i, k in enumerate(kind) if k != "null")
        return _long(branch) + (b"" if v is None else _value(kind[branch], v))
    if kind == "long":
        return _long(v)
    if kind == "double":
        return struct.pack("<d", v)
    if kind == "boolean":
        return b"\x01" if v else b"\x00"
    return _bytes(str(v).encode())


def container(schema: dict[str, Any], rows: list[dict[str, Any]], codec: str = "null") -> bytes:
    """An Avro object container file of `rows` (one block), codec `null` or `deflate`."""
    body = b"".join(_value(f["type"], row.get(f["name"])) for row in rows for f in schema["fields"])
    if codec == "deflate":
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)  # Avro's deflate is raw, no zlib header
        body = packer.compress(body) + packer.flush()
    meta = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    header = MAGIC + _long(len(meta)) + b"".join(_bytes(k.encode()) + _bytes(v) for k, v in meta.items())
    sync = os.urandom(16)
    return header + _long(0) + sync + _long(len(rows)) + _bytes(body) + sync
