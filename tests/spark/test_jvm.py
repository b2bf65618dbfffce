"""Every function of lakeinlet.jvm against the running Spark line, and the file-index fast path's JVM
calls on it: run with each Spark line's PySpark, so a line that moves an internal fails here first."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import types as T

from lakeinlet import jvm as lakejvm
from lakeinlet.dev.emulator import MotoServer
from lakeinlet.incremental.model import MISSING, PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read import file_index

pytestmark = [pytest.mark.spark]


def test_gateway_is_the_jvm_of_the_running_session(spark: Any) -> None:
    gateway = lakejvm.gateway()  # with a context already there, it only hands back its JVM
    assert str(gateway.java.lang.System.getProperty("java.version")) == str(
        lakejvm.of(spark).java.lang.System.getProperty("java.version"))
    assert lakejvm.loadable(gateway, "org.apache.spark.SparkContext")


def test_session_and_frame_are_the_java_objects_behind_them(spark: Any) -> None:
    assert str(lakejvm.session(spark).version()) == spark.version
    assert str(lakejvm.session(spark).conf().get("spark.sql.session.timeZone")) == "UTC"
    jdf = lakejvm.frame(spark.range(3))
    assert jdf.count() == 3
    assert jdf.queryExecution().analyzed().collectLeaves().size() == 1


def test_hadoop_conf_is_the_contexts(spark: Any, moto_server: MotoServer) -> None:
    conf = lakejvm.hadoop_conf(spark)
    assert str(conf.get("fs.s3a.endpoint")) == moto_server.endpoint  # spark.hadoop.* of the session
    conf.set("lakeinlet.test.jvm", "set")
    try:
        assert str(lakejvm.hadoop_conf(spark).get("lakeinlet.test.jvm")) == "set"
    finally:
        conf.unset("lakeinlet.test.jvm")


def test_loadable_sees_the_session_jars(spark: Any) -> None:
    jvm = lakejvm.of(spark)
    assert lakejvm.loadable(jvm, "org.apache.hadoop.fs.s3a.S3AFileSystem")
    assert not lakejvm.loadable(jvm, "org.example.NoSuchClass")


def test_path_uris_are_spelled_as_sparks_file_paths(spark: Any, tmp_path: Path) -> None:
    folder = tmp_path / "a b"
    folder.mkdir()
    pq.write_table(pa.table({"id": [1]}), folder / "x y.parquet")
    [row] = spark.read.parquet(str(folder)).select("_metadata.file_path").collect()
    assert lakejvm.path_uris(spark, [f"file:{folder}/x y.parquet"]) == [row[0]]
    assert lakejvm.path_uris(spark, ["s3a://b/in//k.parquet", "s3a://b/in/"]) == [
        "s3a://b/in/k.parquet", "s3a://b/in"]


def test_qualify_makes_a_relative_local_path_whole(spark: Any) -> None:
    assert lakejvm.qualify(spark, "some/table") == f"file:{Path.cwd()}/some/table"
    assert lakejvm.qualify(spark, "s3a://b/t") == "s3a://b/t"


def test_close_filesystems_drops_the_cached_ones(spark: Any, tmp_path: Path) -> None:
    fs = lakejvm.of(spark).org.apache.hadoop.fs.FileSystem
    before = fs.get(lakejvm.hadoop_conf(spark))
    assert fs.get(lakejvm.hadoop_conf(spark)) == before
    lakejvm.close_filesystems(spark)
    assert fs.get(lakejvm.hadoop_conf(spark)) != before
    spark.range(2).write.parquet(str(tmp_path / "t"))  # new ones are made as needed
    assert spark.read.parquet(str(tmp_path / "t")).count() == 2


class _Supplier:
    """A java.util.function.Supplier written in Python: the JVM calls it back."""

    def get(self) -> str:
        return "from Python"

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Supplier"]


def test_start_callback_server_lets_the_jvm_call_python(spark: Any) -> None:
    lakejvm.start_callback_server(spark)
    lakejvm.start_callback_server(spark)  # started once
    assert lakejvm.of(spark).java.util.Optional.empty().orElseGet(_Supplier()) == "from Python"


def test_the_file_index_builds_a_status_from_a_head_without_asking_the_store(
        spark: Any, tmp_path: Path) -> None:
    """A head's size and mtime are the plan's (no status fetched: the file's own mtime differs),
    and what Spark reports as each row's `_metadata`; an object without a head is still fetched."""
    for name in ("a.parquet", "b.parquet"):
        pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), tmp_path / name)
    size = (tmp_path / "a.parquet").stat().st_size
    then = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    now = datetime.now(UTC)
    objs = [PlannedObject("b", key, "e", None, 1, key, now, 0) for key in ("a.parquet", "b.parquet")]
    heads = {("b", "a.parquet"): ObjectHead(size, "e", then)}
    schema = T.StructType([T.StructField("id", T.LongType())])
    read = file_index.indexed_read(spark, lambda o: f"file:{tmp_path}/{o.key}", {}, schema, objs, heads)
    df, left, planned = read.df, read.objs, read.planned
    assert df is not None and left == objs
    by_name = {path.rpartition("/")[2]: status for path, status in planned.items()}
    assert by_name["a.parquet"] == (size, 1767323045000)
    assert by_name["b.parquet"][1] == (tmp_path / "b.parquet").stat().st_mtime_ns // 1_000_000
    assert file_index.planned_files(df) == planned
    seen = {r["name"]: r["mtime"] for r in df.select(
        df["_metadata.file_name"].alias("name"), df["_metadata.file_modification_time"].alias("mtime")
    ).distinct().collect()}
    assert seen["a.parquet"].astimezone(UTC) == then


def test_static_field_reads_a_private_one(spark: Any) -> None:
    local = lakejvm.static_field(spark, "org.apache.iceberg.spark.CommitMetadata", "COMMIT_PROPERTIES")
    assert "ThreadLocal" in str(local.getClass().getName())
    assert lakejvm.static_field(spark, "java.lang.Integer", "MAX_VALUE") == 2**31 - 1


def test_the_file_index_fast_path_runs_on_this_spark_line(
        spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Planned from file statuses, a missing object set aside, the plan's files read back; no fallback."""
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), tmp_path / "a.parquet")
    now = datetime.now(UTC)
    objs = [PlannedObject("b", key, "e", None, 1, key, now, 0) for key in ("a.parquet", "gone.parquet")]
    schema = T.StructType([T.StructField("id", T.LongType())])
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        read = file_index.indexed_read(spark, lambda o: f"file:{tmp_path}/{o.key}", {}, schema, objs)
        df, left, failed, planned = read.df, read.objs, read.failed, read.planned
        assert df is not None and left == objs[:1]
        assert sorted(r[0] for r in df.collect()) == [1, 2]
        assert file_index.planned_files(df) == planned
    assert list(failed) == [("b", "gone.parquet")] and failed[("b", "gone.parquet")][0] == MISSING
    [(path, (size, _))] = planned.items()
    assert path.endswith("/a.parquet") and size == (tmp_path / "a.parquet").stat().st_size
    assert file_index.usable("read") and file_index.usable("plan")
    assert not [r for r in caplog.records if r.getMessage() == "file_index_fallback"]


def test_the_file_index_plans_a_json_read_as_spark_reads_it_fetching_every_status(
        spark: Any, tmp_path: Path) -> None:
    """JSON lines through the file index: the rows and the malformed line's corrupt record are what
    `spark.read.json` gives; the status is fetched even with a head (the file's own mtime, not the
    head's), and a missing object is set aside."""
    (tmp_path / "a.json").write_text('{"id": 1}\n{"id": 2}\nnot json\n')
    now = datetime.now(UTC)
    objs = [PlannedObject("b", key, "e", None, 1, key, now, 0) for key in ("a.json", "gone.json")]
    heads = {("b", "a.json"): ObjectHead(5, "e", datetime(2026, 1, 2, tzinfo=UTC))}
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("_corrupt", T.StringType())])
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt"}
    read = file_index.indexed_read(spark, lambda o: f"file:{tmp_path}/{o.key}", options, schema, objs, heads,
                                   "json")
    assert read.df is not None and read.objs == objs[:1] and list(read.failed) == [("b", "gone.json")]
    plain = spark.read.options(**options).schema(schema).json(str(tmp_path / "a.json"))
    assert sorted(map(tuple, read.df.collect()), key=str) == sorted(map(tuple, plain.collect()), key=str)
    [(size, mtime)] = read.planned.values()
    assert (size, mtime) == ((tmp_path / "a.json").stat().st_size,
                             (tmp_path / "a.json").stat().st_mtime_ns // 1_000_000)
