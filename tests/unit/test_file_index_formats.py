"""Which reads the file-index fast path plans: Parquet and JSON with a schema (JSON's statuses are
fetched, never built from the check's ranged GET); other formats take Spark's own planning."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import types as T

from lakeinlet import fast_paths
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read import file_index
from lakeinlet.incremental.read.reader import SparkReader
from lakeinlet.incremental.read.verdicts import Loaded
from lakeinlet.incremental.settings import ReadSection
from tests.unit.test_jvm_fallback import Session

pytestmark = pytest.mark.unit

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def reader(fmt: str, tmp_path: Path) -> SparkReader:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(T.StructType([T.StructField("id", T.LongType())]).jsonValue()))
    read = ReadSection(source_format=fmt, schema=str(schema))
    return SparkReader(Session(), read, "s3a")  # type: ignore[arg-type]


@pytest.mark.parametrize(("fmt", "indexed"), [("json", True), ("parquet", True), ("csv", False)])
def test_json_and_parquet_reads_with_a_schema_are_planned_by_the_file_index(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str, indexed: bool) -> None:
    monkeypatch.delenv(fast_paths.VARIABLE, raising=False)
    monkeypatch.setattr(file_index, "_lacking", {})
    calls: list[tuple[str, Any]] = []

    def planned(_spark: Any, _uri: Any, _options: Any, _schema: Any, objs: Any, heads: Any = None,
                fmt: str = "parquet") -> Loaded:
        calls.append((fmt, heads))
        return Loaded("indexed", list(objs), {}, {})  # type: ignore[arg-type]

    monkeypatch.setattr(file_index, "indexed_read", planned)
    objs = [PlannedObject("b", f"in/0.{fmt}", "e", None, 10, "id-0", WHEN, 0)]
    heads = {("b", f"in/0.{fmt}"): ObjectHead(10, "e", WHEN)}
    loaded = reader(fmt, tmp_path)._load(objs, None, heads=heads)
    assert loaded.df == ("indexed" if indexed else "planned by Spark")
    assert calls == ([(fmt, heads)] if indexed else [])
