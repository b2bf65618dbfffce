"""Whether a decoded event fits a changelog row (`lakeinlet.changelog.schema`), judged before it
joins a batch: a body's author can make its own message poison, never a Delta commit fail."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from lakeinlet.events import ObjectEvent

INT64_MAX = 2**63 - 1
"""The changelog's `size` is an int64."""
MAX_KEY_BYTES = 1024
"""S3's longest key (UTF-8 bytes): a longer or empty one names no object, and S3 refuses a HEAD
of it, which would fail the loader's batch instead of one message."""
BUCKET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,253}[A-Za-z0-9]")
"""Every name S3 ever gave a bucket (today's 3-63 lowercase rule, and the legacy us-east-1 one:
up to 255 of letters, digits, `.`, `-`, `_`); boto3 refuses anything else (ParamValidationError)."""
OPTIONAL_TEXT = ("etag", "version_id", "sequencer", "region")
SHOWN_CHARS = 60
JSON_KINDS: dict[type, str] = {dict: "an object", list: "an array"}


def event_problem(event: ObjectEvent) -> str | None:
    """What keeps `event` out of a changelog row (one line), or None when every field fits."""
    checks = (_bucket(event.bucket), _key(event.key), _text("event_name", event.event_name),
              _size(event.size), _time(event.event_time),
              *(_text(name, getattr(event, name), optional=True) for name in OPTIONAL_TEXT))
    return next((problem for problem in checks if problem), None)


def shown(value: object) -> str:
    """A JSON value for an error line: scalars escaped and cut short, containers by kind only
    (a deeply nested one cannot even be printed)."""
    if isinstance(value, str):
        cut = value[:SHOWN_CHARS]
        return repr(cut) + ("..." if len(value) > SHOWN_CHARS else "")
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= SHOWN_CHARS else f"{text[:20]}... ({len(text)} digits)"
    return JSON_KINDS.get(type(value), type(value).__name__)


def _bucket(value: object) -> str | None:
    if isinstance(value, str) and BUCKET_NAME.fullmatch(value):
        return None
    return f"bucket: expected an S3 bucket name (3-255 of A-Z a-z 0-9 . - _), found {shown(value)}"


def _key(value: object) -> str | None:
    if problem := _text("key", value):
        return problem
    size = len(str(value).encode("utf-8"))
    if not 0 < size <= MAX_KEY_BYTES:
        return f"key: expected 1-{MAX_KEY_BYTES} UTF-8 bytes, found {size}: {shown(value)}"
    return None


def _text(name: str, value: object, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        return f"{name}: expected a string{' or null' if optional else ''}, found {shown(value)}"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800" in JSON) has no UTF-8 form
        return f"{name}: expected Unicode text, found a lone surrogate at {exc.start}: {shown(value)}"
    return None


def _size(value: object) -> str | None:
    if value is None or (type(value) is int and 0 <= value <= INT64_MAX):
        return None
    return f"size: expected an integer 0-{INT64_MAX} or null, found {shown(value)}"


def _time(value: object) -> str | None:
    if isinstance(value, datetime) and value.utcoffset() is not None:
        try:
            value.astimezone(UTC)
            return None
        except OverflowError:
            pass
    return f"event_time: expected a time with a zone within years 1-9999 in UTC, found {value!r}"
