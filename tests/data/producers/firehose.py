"""Amazon Data Firehose to S3: `<prefix>YYYY/MM/dd/HH/<stream>-<version>-YYYY-MM-dd-HH-mm-ss-<uuid>
<file extension>`, GZIP. With a newline delimiter and the `.gz` file extension (loaded); the same
bytes with no file extension; and records concatenated with no delimiter (Firehose's default)."""

from __future__ import annotations

import gzip
import json
import uuid
from typing import Any

from tests.data.producers.corpus import Produced, json_lines, put

HOUR = "2026/11/27/09/"


def key(stream: str, second: int, extension: str) -> str:
    name = f"{stream}-1-2026-11-27-09-05-{second:02d}-{uuid.UUID(int=second + 0xF1EE)}"
    return f"firehose/{stream}/{HOUR}{name}{extension}"


def _clicks(first: int, n: int) -> list[dict[str, Any]]:
    return [{"click_id": i, "page": f"/p/{i % 4}", "ms": 100 + i} for i in range(first, first + n)]


def streams(s3: Any, bucket: str) -> Produced:
    lines, plain_key, concatenated = _clicks(0, 4), _clicks(4, 3), _clicks(7, 3)
    good = key("clicks", 12, ".gz")
    no_extension = key("clicks", 13, "")
    no_delimiter = key("clicks-raw", 14, ".gz")
    events = (put(s3, bucket, good, gzip.compress(json_lines(lines))),
              put(s3, bucket, no_extension, gzip.compress(json_lines(plain_key))),
              put(s3, bucket, no_delimiter, gzip.compress("".join(map(json.dumps, concatenated)).encode())))
    return Produced("firehose", (events,), (*lines, *plain_key), frozenset({good, no_extension}), set_aside={
        no_delimiter: ("corrupt", "concatenated without newlines")})
