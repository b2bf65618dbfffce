"""A batch is read without merging schemas only when every footer was read and all agree."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import Footer
from lakeinlet.incremental.read.reader import one_schema

pytestmark = pytest.mark.unit


def _footer(table: pa.Table, tmp: str) -> Footer:
    pq.write_table(table, tmp)
    meta = pq.read_metadata(tmp)
    return Footer(meta.num_rows, meta.schema)


def _obj(key: str) -> PlannedObject:
    return PlannedObject("b", key, "e", None, 3, f"id-{key}", datetime.now(UTC), 0)


def test_one_schema_only_when_all_footers_agree(tmp_path: object) -> None:
    same = _footer(pa.table({"a": [1], "b": ["x"]}), f"{tmp_path}/1.parquet")
    same2 = _footer(pa.table({"a": [2, 3], "b": ["y", "z"]}), f"{tmp_path}/2.parquet")
    wider = _footer(pa.table({"a": [1], "b": ["x"], "c": [1.0]}), f"{tmp_path}/3.parquet")
    other_type = _footer(pa.table({"a": ["1"], "b": ["x"]}), f"{tmp_path}/4.parquet")
    objs = [_obj("1"), _obj("2")]
    assert one_schema(objs, {("b", "1"): same, ("b", "2"): same2})
    assert not one_schema(objs, {("b", "1"): same})  # a footer not read: merge, as before
    assert not one_schema(objs, {("b", "1"): same, ("b", "2"): wider})
    assert not one_schema(objs, {("b", "1"): same, ("b", "2"): other_type})
    assert not one_schema([], {})
