"""An explicit schema (`--schema`) as Spark's type: a JSON schema file or a DDL string."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import types as T

from lakeinlet.errors import TerminalError


def parse_schema(text: str | None) -> T.StructType | None:
    """An explicit schema: a path to a Spark JSON schema file, or a DDL string."""
    if not text:
        return None
    if text.strip().endswith(".json") and Path(text).is_file():
        return T.StructType.fromJson(json.loads(Path(text).read_text()))
    parsed = T._parse_datatype_string(text)
    if not isinstance(parsed, T.StructType):
        raise TerminalError(f"--schema: expected a list of columns, found {text!r}")
    return parsed
