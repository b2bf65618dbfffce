"""Adapter: Spark reads one batch's objects (one read per batch) and writes Parquet into the table.

Files go to `<table>/data/<batch id>/[<col>=<value>/]part-….parquet`: a folder per attempt, so a
crashed attempt leaves orphans no commit references. Bad input never fails the batch: corrupt and
vanished files are skipped by the bulk read and then named by a per-file check of the (few)
objects that yielded no rows; malformed JSON/CSV lines are counted and dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from lakeinlet.errors import TerminalError
from lakeinlet.incremental import datafiles
from lakeinlet.incremental.model import CORRUPT, MISSING, PlannedObject
from lakeinlet.incremental.ports import ReadResult
from lakeinlet.incremental.settings import ReadSection

CORRUPT_COL = "_corrupt_record"
LINEAGE = ("_source_bucket", "_source_key", "_source_etag", "_source_event_time")
Failed = dict[tuple[str, str], tuple[str, str]]
WIDENING = {("int", "bigint"), ("float", "double"), ("int", "double"), ("bigint", "double"),
            ("date", "timestamp")}


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


class SparkReader:
    """Reads planned objects with Spark's native readers and writes them into the table folder."""

    def __init__(self, spark: SparkSession, read: ReadSection, table_uri: str, scheme: str,
                 fs: Any, root: str, partition_by: Sequence[str]) -> None:
        self.spark, self.read, self.scheme = spark, read, scheme
        self.table_uri = table_uri.rstrip("/")
        self.fs, self.root, self.partition_by = fs, root, list(partition_by)
        self.schema = parse_schema(read.schema)
        self.text = read.source_format in ("json", "csv")

    def uri(self, o: PlannedObject) -> str:
        return f"{self.scheme}://{o.bucket}/{o.key}"

    def _reader(self, strict: bool = False) -> Any:
        r = self.spark.read.format(self.read.source_format).options(**self.read.options)
        if self.text:
            r = r.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT_COL)
        elif not strict:
            r = r.option("ignoreCorruptFiles", "true")
        if self.read.source_format == "parquet" and self.schema is None:
            r = r.option("mergeSchema", "true")
        if not strict:
            r = r.option("ignoreMissingFiles", "true")
        if self.schema is not None:
            extra = [T.StructField(CORRUPT_COL, T.StringType())] if self.text else []
            r = r.schema(T.StructType(self.schema.fields + extra))
        return r

    def _lineage(self, objs: Sequence[PlannedObject], batch_id: str) -> DataFrame:
        jpath = self.spark._jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
        rows = [(jpath(self.uri(o)).toUri().toString(), o.bucket, o.key, o.etag, o.event_time)
                for o in objs]
        schema = "_path STRING, " + ", ".join(
            f"{c} {'TIMESTAMP' if c.endswith('time') else 'STRING'}" for c in LINEAGE)
        return self.spark.createDataFrame(rows, schema).withColumn("_ingest_batch", F.lit(batch_id))

    def read_write(self, objs: Sequence[PlannedObject], batch_id: str,
                   table_schema: Any | None) -> ReadResult:
        """One Spark read over all objects, one write; then per-object counts from the output."""
        raw, objs, vanished = self._load(objs)
        if raw is None:
            return ReadResult((), None, {}, {}, vanished)
        raw = self._reconcile(raw, objs, table_schema)
        with_path = raw.withColumn("_path", F.col("_metadata.file_path"))
        df = with_path.join(F.broadcast(self._lineage(objs, batch_id)), "_path", "left").drop("_path")
        bad: dict[tuple[str, str], int] = {}
        if CORRUPT_COL in raw.columns:
            df = df.persist()
            bad = _counts(df.filter(F.col(CORRUPT_COL).isNotNull()))
            df = df.filter(F.col(CORRUPT_COL).isNull()).drop(CORRUPT_COL)
        folder = f"data/{batch_id}"
        df.write.mode("append").partitionBy(*self.partition_by).parquet(f"{self.table_uri}/{folder}")
        out = self.spark.read.parquet(f"{self.table_uri}/{folder}") if _wrote(self.fs, self.root, folder) \
            else None
        rows = _counts(out) if out is not None else {}
        df.unpersist()
        if (None, None) in rows:
            raise TerminalError(f"batch {batch_id}: rows without lineage (file path not matched)")
        failed = self._check_empty(objs, rows, bad) | vanished
        files = datafiles.data_files(self.fs, self.root, folder, self.partition_by)
        return ReadResult(tuple(files), to_arrow_schema(df.schema), rows, bad, failed)

    def _load(self, objs: Sequence[PlannedObject]) -> tuple[DataFrame | None, list[PlannedObject], Failed]:
        """The bulk read; Spark checks that every path exists when planning the read, so an
        object deleted since the HEAD is set aside as missing and the read is planned again."""
        left, vanished = list(objs), Failed()
        while left:
            try:
                return self._reader().load([self.uri(o) for o in left]), left, vanished
            except AnalysisException as exc:
                gone = [o for o in left if "PATH_NOT_FOUND" in str(exc) and self.uri(o) in str(exc)]
                if not gone:
                    raise
                for o in gone:
                    vanished[(o.bucket, o.key)] = (MISSING, f"object not found when read: {self.uri(o)}")
                left = [o for o in left if o not in gone]
        return None, left, vanished

    def _reconcile(self, df: DataFrame, objs: Sequence[PlannedObject], table: Any | None) -> DataFrame:
        """Cast safe widenings to the table's types; a type conflict names the file."""
        if table is None:
            return df
        current = {f.name: f.dataType for f in from_arrow_schema(table).fields}
        for f in df.schema.fields:
            want = current.get(f.name)
            if want is None or want == f.dataType:
                continue
            if (f.dataType.simpleString(), want.simpleString()) in WIDENING:
                df = df.withColumn(f.name, F.col(f.name).cast(want))
                continue
            raise TerminalError(self._conflict(objs, f.name, f.dataType, want))
        if self.read.schema_mode == "strict" and (new := set(df.columns) - set(current) - {CORRUPT_COL}):
            raise TerminalError(f"--schema-mode strict: batch brings new columns {sorted(new)}")
        return df

    def _conflict(self, objs: Sequence[PlannedObject], name: str, found: Any, want: Any) -> str:
        culprit = "one of the batch's files"
        for o in objs:
            try:
                fields = {f.name: f.dataType for f in self._reader().load(self.uri(o)).schema.fields}
            except Exception:  # unreadable files are reported as corrupt elsewhere
                continue
            if name in fields and fields[name] != want:
                culprit, found = self.uri(o), fields[name]
                break
        return (f"type conflict in column {name!r}: the table has {want.simpleString()}, "
                f"{culprit} has {found.simpleString()}")

    def _check_empty(self, objs: Sequence[PlannedObject], rows: dict[tuple[str, str], int],
                     bad: dict[tuple[str, str], int]) -> dict[tuple[str, str], tuple[str, str]]:
        """Objects with bytes but no rows: read alone, strictly, to name what is wrong."""
        failed = {}
        for o in objs:
            ref = (o.bucket, o.key)
            if rows.get(ref) or o.size == 0:
                continue
            if bad.get(ref):
                failed[ref] = (CORRUPT, f"no parseable record ({bad[ref]} malformed)")
                continue
            try:
                self._reader(strict=True).load(self.uri(o)).count()
            except Exception as exc:  # Spark raises Py4J/Analysis errors; classify by text
                text = str(exc).split("\n")[0][:500]
                missing = "FileNotFound" in str(exc) or "does not exist" in text.lower()
                failed[ref] = (MISSING, text) if missing else (CORRUPT, text)
        return failed


def _counts(df: DataFrame) -> dict[tuple[str, str], int]:
    rows = df.groupBy("_source_bucket", "_source_key").count().collect()
    return {(r["_source_bucket"], r["_source_key"]): int(r["count"]) for r in rows}


def _wrote(fs: Any, root: str, folder: str) -> bool:
    return bool(datafiles.list_written(fs, root, folder))
