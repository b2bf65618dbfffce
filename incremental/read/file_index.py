"""Fast path (switch `file-index`): a Parquet or JSON read planned from the objects' file statuses
(Parquet: those of the check before the read, else fetched) handed to Spark's file index through its
JVM classes; the plain path is Spark's own planning (`reader.SparkReader._load`). A Spark line without
the JVM classes or methods a step calls takes the plain path for the process, with one warning."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.model import MISSING, PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read.verdicts import Failed, Loaded, Planned
from lakeinlet.logs import event

STATUS_THREADS = 16
"""Parallel file-status requests (or built statuses) when Spark's file index is handed the batch's files."""
LINKAGE = frozenset(f"java.lang.{name}" for name in (
    "ClassNotFoundException", "NoClassDefFoundError", "NoSuchMethodError", "NoSuchFieldError",
    "AbstractMethodError", "IncompatibleClassChangeError"))
"""Java errors that say the classes on the classpath are not the ones the fast path was written for."""
FILE_FORMATS = {"parquet": "parquet.ParquetFileFormat", "json": "json.JsonFileFormat"}
"""Source format → its Spark `FileFormat` class (under `execution.datasources`): the formats planned here."""
log = logging.getLogger(__name__)
_lacking: dict[str, str] = {}
"""Step (`read`, `plan`) → why this process's Spark cannot take it; such a step takes the plain path."""
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def usable(step: str) -> bool:
    """Whether `step` (`read`: `indexed_read`; `plan`: `planned_files`) has not been found to lack
    what it calls on this process's Spark."""
    return step not in _lacking


def lacks(exc: BaseException) -> bool:
    """Whether `exc` says Spark lacks a JVM class, method or constructor the fast path calls,
    rather than that a request failed. To py4j a missing class is a package, which is not
    callable (TypeError); a missing method or constructor is a Py4JError."""
    if isinstance(exc, Py4JJavaError):
        try:
            return str(exc.java_exception.getClass().getName()) in LINKAGE
        except Exception:  # the JVM is gone: the plain path meets that itself
            return False
    return isinstance(exc, AttributeError | TypeError | Py4JError)


def fell_back(step: str, exc: BaseException) -> None:
    """Log that `step` took the plain path after `exc`: each time for a failure; once per process
    for a Spark line that lacks what the step calls (the step then stays on the plain path)."""
    if lacks(exc):
        if step in _lacking:
            return
        _lacking[step] = reason = str(exc)[:300]
        from pyspark import __version__ as spark

        event(log, "file_index_fallback", level=logging.WARNING, step=step, spark=spark, reason=reason,
              until="the process ends")
    else:
        event(log, "file_index_fallback", level=logging.WARNING, step=step, reason=str(exc)[:300])


def indexed_read(spark: SparkSession, uri: Callable[[PlannedObject], str], options: Mapping[str, str],
                 schema: T.StructType, objs: Sequence[PlannedObject],
                 heads: Mapping[tuple[str, str], ObjectHead] | None = None, fmt: str = "parquet") -> Loaded:
    """The read planned from the objects' file statuses, handed to Spark's file index, which then
    lists nothing (Spark's own planning checks each path, then lists them one by one on the
    driver). An object with a head (`heads`: the check before the read, a HEAD or the ranged GET
    of a Parquet tail) gets its status built from it, with no request: the bytes Spark reads are
    then held to that check's answer (rows against its footer, lineage with its etag). Any other
    object gets one getFileStatus (`STATUS_THREADS` at a time), taken at planning time as Spark's
    would be, and one not found is set aside as missing, as Spark's planning would. The value
    holds each planned file's size and mtime as the plan holds them (`Loaded.planned`). `fmt`: a
    key of FILE_FORMATS; a JSON object's status is always fetched, never built from its head: no
    footer holds a text object's bytes to the check's answer, and a status fetched at planning is
    what Spark's own planning would hold it to."""
    jvm, js = lakejvm.of(spark), lakejvm.session(spark)
    ds = jvm.org.apache.spark.sql.execution.datasources
    scala_options = jvm.PythonUtils.toScalaMap(options)
    conf = js.sessionState().newHadoopConfWithOptions(scala_options)
    cache = ds.FileStatusCache.getOrCreate(js)
    fs_api = jvm.org.apache.hadoop.fs
    status_class = jvm.java.lang.Class.forName("org.apache.hadoop.fs.FileStatus")
    heads = heads if heads is not None and fmt == "parquet" else {}
    planned: Planned = {}

    def status(o: PlannedObject) -> Any:
        path = fs_api.Path(uri(o))
        fs = path.getFileSystem(conf)
        head = heads.get((o.bucket, o.key))
        if head is not None and head.last_modified is not None:
            path = fs.makeQualified(path)
            found = fs_api.FileStatus(head.size, False, 1, fs.getDefaultBlockSize(path),
                                      _millis(head.last_modified), path)
        else:
            try:
                found = fs.getFileStatus(path)
            except Py4JJavaError as exc:
                if exc.java_exception.getClass().getName() != "java.io.FileNotFoundException":
                    raise
                return None
        leaf = jvm.java.lang.reflect.Array.newInstance(status_class, 1)
        leaf[0] = found
        cache.putLeafFiles(path, leaf)
        planned[found.getPath().toUri().toString()] = (found.getLen(), found.getModificationTime())
        return path

    paths = list(_status_pool().map(status, objs))
    failed: Failed = {(o.bucket, o.key): (MISSING, f"object not found when read: {uri(o)}")
                      for o, path in zip(objs, paths, strict=True) if path is None}
    left = [o for o, path in zip(objs, paths, strict=True) if path is not None]
    if not left:
        return Loaded(None, left, failed, planned)
    seq = jvm.scala.collection.JavaConverters.asScalaBufferConverter
    none, empty = jvm.scala.Option.empty(), ds.PartitionSpec.emptySpec()
    jschema = js.parseDataType(schema.json())
    try:  # no partition columns from the source paths (`in/year=2026/…` is just a key)
        index = ds.InMemoryFileIndex(js, seq([p for p in paths if p is not None]).asScala().toSeq(),
                                     scala_options, jvm.scala.Option.apply(jschema), cache,
                                     jvm.scala.Option.apply(empty), none)
    finally:
        cache.invalidateAll()
    package, _, name = FILE_FORMATS[fmt].partition(".")
    file_format = getattr(getattr(ds, package), name)()
    relation = ds.HadoopFsRelation(index, empty.partitionColumns(), jschema, none, file_format,
                                   scala_options, js)
    return Loaded(DataFrame(js.baseRelationToDataFrame(relation), spark), left, failed, planned)


def _millis(t: datetime) -> int:
    """Milliseconds since the epoch, as Hadoop's file statuses hold mtimes (a naive time is local,
    as `reader._micros` takes it)."""
    aware = t if t.tzinfo is not None else t.astimezone()
    return (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _status_pool() -> ThreadPoolExecutor:
    """Threads for file-status requests, kept for the process (py4j pins a JVM thread to each)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(STATUS_THREADS, thread_name_prefix="lakeinlet-status")
        return _pool


def planned_files(df: DataFrame) -> Planned | None:
    """The files of the one file relation `df` reads, as its file index holds them (no request
    is made); None when the plan has no file relation or more than one, or cannot be read on
    this Spark (`fell_back`)."""
    if not usable("plan"):
        return None
    try:
        return _planned_files(df)
    except Exception as exc:  # the batch is then read and checked first (never failed by a fast path)
        fell_back("plan", exc)
        return None


def _planned_files(df: DataFrame) -> Planned | None:
    found: Planned | None = None
    leaves = lakejvm.frame(df).queryExecution().analyzed().collectLeaves().iterator()
    while leaves.hasNext():
        leaf = leaves.next()
        if leaf.getClass().getSimpleName() != "LogicalRelation":
            continue
        relation = leaf.relation()
        if found is not None or relation.getClass().getSimpleName() != "HadoopFsRelation":
            return None
        found = {}
        files = relation.location().allFiles().iterator()
        while files.hasNext():
            f = files.next()
            found[f.getPath().toUri().toString()] = (f.getLen(), f.getModificationTime())
    return found
