"""bench/merge.py's hand-written side per format (the copy of the loader's table, and the MERGE a user
would write in Spark over the same change files), the tables' checksum, and the loader's step timings."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, cast
from unittest.mock import patch

from _dms import COLUMNS, SCHEMA
from loader_throughput import with_metadata_lineage

from lakeinlet import jvm as lakejvm
from lakeinlet.aws import client
from lakeinlet.incremental.targets.delta import target as delta_target

HUDI_WRITE = {"hoodie.datasource.write.recordkey.field": "id",
              "hoodie.datasource.write.precombine.field": "ts",
              "hoodie.record.merge.mode": "EVENT_TIME_ORDERING"}
"""A Hudi upsert by `id` where the greatest `ts` wins, against the table's row too (event-time
ordering), and `_hoodie_is_deleted` deletes."""


def checksum(df: Any) -> tuple[int, int]:
    """The rows of `df` and the sum of a hash of each row's change columns (order-free)."""
    from pyspark.sql import functions as F

    row = df.select(F.count(F.lit(1)), F.sum(F.xxhash64(*(F.col(c).cast("string") for c in COLUMNS))
                                             .cast("decimal(38,0)"))).first()
    return int(row[0]), int(row[1] or 0)


def latest(spark: Any, paths: list[str]) -> Any:
    """The change files read as the hand-written job does, with the loader's lineage columns built
    from `_metadata`, and the newest change of each key (a MERGE takes one source row per key)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    df = with_metadata_lineage(spark.read.option("header", "true").schema(SCHEMA).csv(paths))
    w = Window.partitionBy("id").orderBy(F.col("ts").desc(), F.col("_source_key").desc())
    return df.withColumn("_n", F.row_number().over(w)).where("_n = 1").drop("_n")


def _like(df: Any, schema: Any) -> Any:
    """`df` with the table's columns (`schema`), in its order (nulls for a column the changes lack)."""
    from pyspark.sql import functions as F

    return df.select(*(F.col(f.name) if f.name in df.columns else F.lit(None).cast(f.dataType).alias(f.name)
                       for f in schema.fields if not f.name.startswith("_hoodie")))


@dataclass
class Hand:
    """The hand-written job's table (`s3a://<lake>/hand`) beside the loader's (`parts.target`)."""

    fmt: str
    spark: Any
    aws: Any
    lake: str
    parts: Any
    schema: Any = None
    """The table's Spark schema, read once after the copy (a job knows its table's columns)."""

    @classmethod
    def of(cls, fmt: str, spark: Any, aws: Any, lake: str, parts: Any) -> Hand:
        return cls(fmt, spark, aws, lake, parts)

    @property
    def path(self) -> str:
        return f"s3a://{self.lake}/hand"

    @property
    def iceberg_name(self) -> str:
        return f"lakeinlet.bench.hand_{self.lake.replace('-', '_')}"

    def loader_table(self) -> Any:
        if self.fmt == "iceberg":
            return self.spark.table(cast(Any, self.parts.target).catalog.spark_name)
        return self.spark.read.format(self.fmt).load(f"s3a://{self.lake}/orders")

    def table(self) -> Any:
        if self.fmt == "iceberg":
            return self.spark.table(self.iceberg_name)
        return self.spark.read.format(self.fmt).load(self.path)

    def copy(self) -> None:
        """Delta and Hudi: the table's objects copied as they are (their logs name files relative
        to the table); Iceberg (absolute paths in its metadata): a CREATE TABLE AS SELECT."""
        self._copy()
        self.schema = self.table().schema

    def _copy(self) -> None:
        if self.fmt == "iceberg":
            self.spark.sql("CREATE NAMESPACE IF NOT EXISTS lakeinlet.bench")
            name = cast(Any, self.parts.target).catalog.spark_name
            self.spark.sql(f"CREATE TABLE {self.iceberg_name} USING iceberg LOCATION '{self.path}' "
                           f"AS SELECT * FROM {name}")
            return
        s3 = client("s3", self.aws, max_pool_connections=16)
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=self.lake, Prefix="orders/")
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]

        def copy(key: str) -> None:
            s3.copy_object(Bucket=self.lake, Key="hand/" + key.removeprefix("orders/"),
                           CopySource={"Bucket": self.lake, "Key": key})

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(copy, keys))

    def merge(self, paths: list[str]) -> None:
        """The MERGE of the change files a user would write for the format."""
        if self.fmt == "hudi":
            return self._hudi(paths)
        changes = _like(latest(self.spark, paths), self.schema)
        if self.fmt == "delta":
            return self._delta(changes)
        changes.createOrReplaceTempView("hand_changes")
        self.spark.sql(f"MERGE INTO {self.iceberg_name} t USING hand_changes s ON t.id = s.id "
                       "WHEN MATCHED AND s.Op = 'D' AND s.ts >= t.ts THEN DELETE "
                       "WHEN MATCHED AND s.ts >= t.ts THEN UPDATE SET * "
                       "WHEN NOT MATCHED AND s.Op != 'D' THEN INSERT *")
        return None

    def _delta(self, changes: Any) -> None:
        """delta-spark's `DeltaTable.forPath(...).merge(...)`, called on the JVM class the Python
        package wraps: the delta-spark jar is on the session, its Python package is not installed."""
        tables = lakejvm.of(self.spark).io.delta.tables.DeltaTable
        table = tables.forPath(lakejvm.session(self.spark), self.path).alias("t")
        (table.merge(lakejvm.frame(changes.alias("s")), "t.id = s.id")
         .whenMatched("s.Op = 'D' AND s.ts >= t.ts").delete()
         .whenMatched("s.Op != 'D' AND s.ts >= t.ts").updateAll()
         .whenNotMatched("s.Op != 'D'").insertAll().execute())

    def _hudi(self, paths: list[str]) -> None:
        from pyspark.sql import functions as F

        df = with_metadata_lineage(self.spark.read.option("header", "true").schema(SCHEMA).csv(paths))
        # no newest-per-key step: Hudi's upsert combines a key's changes by the ordering field
        df = _like(df, self.schema).withColumn("_hoodie_is_deleted", F.col("Op") == "D")
        name = self.table_name()
        (df.write.format("hudi").options(**HUDI_WRITE).option("hoodie.table.name", name)
         .option("hoodie.datasource.write.operation", "upsert").mode("append").save(self.path))

    def table_name(self) -> str:
        """The Hudi table's name as its copied properties hold it (a writer must give the same)."""
        s3 = client("s3", self.aws)
        text = s3.get_object(Bucket=self.lake, Key="hand/.hoodie/hoodie.properties")["Body"].read().decode()
        return next(line.split("=", 1)[1] for line in text.splitlines()
                    if line.startswith("hoodie.table.name="))


@contextmanager
def profiled(steps: dict[str, float]) -> Iterator[None]:
    """Seconds of a Delta merge's Spark work, added to `steps`: the changes (with their null-key
    count), the files to rewrite (the key semi-join) and the rewrite (the write of the merged rows)."""
    def timing(name: str, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                steps[name] = steps.get(name, 0.0) + time.perf_counter() - t0
        return run

    with ExitStack() as stack:
        stack.enter_context(patch.object(delta_target, "changes", timing("changes", delta_target.changes)))
        stack.enter_context(patch.object(delta_target, "merged", timing("find files", delta_target.merged)))
        stack.enter_context(patch.object(delta_target.DeltaTarget, "_write",
                                         timing("rewrite", delta_target.DeltaTarget._write)))
        yield
