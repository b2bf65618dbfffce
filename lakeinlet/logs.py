"""Structured logging shared by both jobs: one line per batch, text or JSON (`--log-format`), every
line redacted (`lakeinlet.redact`: a URI, setting or error quoted in a line keeps no secret)."""

from __future__ import annotations

import json
import logging
import re
import sys
import textwrap
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from lakeinlet.config import setting
from lakeinlet.redact import redact

_FIELDS = "lakeinlet_fields"
_UNSAFE = "\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_IN_LINE = re.compile(f"[\n{_UNSAFE}]")
_UNSAFE_IN_BLOCK = re.compile(f"[{_UNSAFE}]")
_QUOTED = re.compile(f'[\\s="\\\\{_UNSAFE}]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str, keep_newlines: bool = False) -> str:
    """`text` with nothing a terminal or a log reader acts on: control characters (newlines, ANSI
    escapes), line separators, bidi overrides and lone surrogates become `\\n`, `\\x1b`, `\\u2028`...
    so a key or a body cannot forge a log line."""
    return (_UNSAFE_IN_BLOCK if keep_newlines else _UNSAFE_IN_LINE).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def text_value(value: Any) -> str:
    """A field's value for `k=v`: as is when plain, else quoted with `\\` and `"` escaped (logfmt),
    so a value cannot forge another field either."""
    text = str(value)
    if text and not _QUOTED.search(text):
        return text
    return '"' + escaped(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name, "event": record.getMessage(),
        }
        doc.update(getattr(record, _FIELDS, {}))
        if record.exc_info:
            doc["error"] = self.formatException(record.exc_info)
        # a lone surrogate has no UTF-8 form: written raw, it would fail the whole line
        return _SURROGATE.sub(_escape, json.dumps(_redacted(doc), default=str, ensure_ascii=False))


def _redacted(value: Any) -> Any:
    """`value` with every string in it redacted (before JSON escapes quotes inside strings)."""
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redacted(v) for v in value]
    return value if isinstance(value, int | float | bool) or value is None else redact(str(value))


class TextFormatter(logging.Formatter):
    """`time level logger event k=v k=v` for people reading a terminal: one line per record whatever
    the message and fields hold (see `escaped`); a traceback follows indented, so no line of it
    can pass for a record of its own."""

    def format(self, record: logging.LogRecord) -> str:
        head = f"{self.formatTime(record, '%H:%M:%S')} {record.levelname:<7} {record.name}: "
        fields = getattr(record, _FIELDS, {})
        tail = " ".join(f"{k}={text_value(v)}" for k, v in fields.items())
        text = head + escaped(record.getMessage()) + (" " + tail if tail else "")
        if record.exc_info:
            text += "\n" + textwrap.indent(escaped(self.formatException(record.exc_info), True), "  ")
        return redact(text)


def say(*parts: object, file: TextIO | None = None) -> None:
    """`print`, redacted: a URI or setting a command prints keeps no secret."""
    print(redact(" ".join(map(str, parts))), file=file)


def setup(fmt: str = "text", level: str = "INFO") -> None:
    """Configure the root `lakeinlet` logger to write to stderr in `fmt` ("text" or "json")."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger("lakeinlet")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def event(logger: logging.Logger, name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one structured event: `name` is the message, `fields` become keys (JSON) or k=v."""
    logger.log(level, name, extra={_FIELDS: fields})


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The fields an `event` gave its record ({} for a plain log line)."""
    return dict(getattr(record, _FIELDS, {}))


@dataclass(frozen=True)
class LogSection:
    """Logging: one structured line per batch, for people (text) or log pipelines (json)."""

    log_format: str = setting("text", "Log line format: `text` (k=v) or `json` (one object a line).",
                              choices=("text", "json"))
    log_level: str = setting("INFO", "Log level: DEBUG, INFO, WARNING or ERROR.",
                             choices=("DEBUG", "INFO", "WARNING", "ERROR"))
