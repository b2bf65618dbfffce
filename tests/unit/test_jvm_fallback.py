"""The file-index fast path on a Spark line without the JVM internals it calls: the read takes Spark's
own planning, with one warning for the process, and is never failed by it. No Spark is started."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JError
from pyspark.sql import types as T

from lakeinlet import fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read import file_index
from lakeinlet.incremental.read.reader import SparkReader
from lakeinlet.incremental.settings import ReadSection

pytestmark = pytest.mark.unit

OBJS = [PlannedObject("b", f"in/{n}.parquet", "e", None, 10, f"id-{n}", datetime(2026, 1, 1, tzinfo=UTC), 0)
        for n in range(2)]


class PlainRead:
    """What the plain path calls: `spark.read.format(...).options(...).schema(...).load(paths)`."""

    def __init__(self) -> None:
        self.loads: list[list[str]] = []

    def format(self, _: str) -> PlainRead:
        return self

    def options(self, **_: str) -> PlainRead:
        return self

    def schema(self, _: Any) -> PlainRead:
        return self

    def load(self, paths: list[str]) -> str:
        self.loads.append(paths)
        return "planned by Spark"


class Session:
    def __init__(self) -> None:
        self.read = PlainRead()


@pytest.fixture
def jvm_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fast path on, nothing yet known about this Spark, and a JVM view that has none of the
    classes the fast path calls (what py4j raises for them); the calls made to it."""
    monkeypatch.delenv(fast_paths.VARIABLE, raising=False)
    monkeypatch.setattr(file_index, "_lacking", {})
    calls: list[str] = []

    def missing(what: str) -> Any:
        def call(_: Any) -> Any:
            calls.append(what)
            raise Py4JError(f"{what}: org.apache.spark.sql.execution.datasources does not exist in the JVM")
        return call

    monkeypatch.setattr(lakejvm, "of", missing("of"))
    monkeypatch.setattr(lakejvm, "frame", missing("frame"))
    return calls


def parquet_reader(spark: Session, tmp_path: Path) -> SparkReader:
    """A Parquet reader with a schema (the fast path needs one), given as a JSON file: a DDL string
    would need Spark's parser."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(T.StructType([T.StructField("id", T.LongType())]).jsonValue()))
    return SparkReader(spark, ReadSection(schema=str(schema)), "s3a")  # type: ignore[arg-type]


def fallbacks(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [{"level": r.levelno, **getattr(r, "lakeinlet_fields", {})} for r in caplog.records
            if r.getMessage() == "file_index_fallback"]


def test_a_spark_without_the_file_index_internals_reads_the_plain_way_and_warns_once(
        jvm_calls: list[str], caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    spark = Session()
    reader = parquet_reader(spark, tmp_path)
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        first = reader._load(OBJS, None)
        second = reader._load(OBJS, None)
    assert (first.df, first.objs, first.failed) == (second.df, second.objs, second.failed) == (
        "planned by Spark", OBJS, {})
    assert spark.read.loads == [[reader.load_path(o) for o in OBJS]] * 2
    assert jvm_calls == ["of"]  # not tried again in this process
    [warned] = fallbacks(caplog)
    assert warned["level"] == logging.WARNING and warned["step"] == "read"
    assert "does not exist in the JVM" in warned["reason"] and warned["until"] == "the process ends"


def test_a_failed_request_falls_back_each_time_and_the_fast_path_is_tried_again(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    monkeypatch.delenv(fast_paths.VARIABLE, raising=False)
    monkeypatch.setattr(file_index, "_lacking", {})
    tried: list[int] = []

    def refused(*_: Any) -> Any:
        tried.append(1)
        raise OSError("connection reset")

    monkeypatch.setattr(file_index, "indexed_read", refused)
    reader = parquet_reader(Session(), tmp_path)
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        for _ in range(2):
            loaded = reader._load(OBJS, None)
            assert (loaded.df, loaded.objs, loaded.failed) == ("planned by Spark", OBJS, {})
    assert len(tried) == 2 and [w["step"] for w in fallbacks(caplog)] == ["read", "read"]


def test_planned_files_unknown_on_such_a_spark_and_said_once(
        jvm_calls: list[str], caplog: pytest.LogCaptureFixture) -> None:
    """The one-pass write then is not taken: the batch is read and checked first."""
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        assert file_index.planned_files(object()) is None  # type: ignore[arg-type]
        assert file_index.planned_files(object()) is None  # type: ignore[arg-type]
    assert jvm_calls == ["frame"]
    assert [(w["level"], w["step"]) for w in fallbacks(caplog)] == [(logging.WARNING, "plan")]
