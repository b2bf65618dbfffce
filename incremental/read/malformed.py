"""Malformed JSON/CSV records of a batch, with the line each stands on in its object."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from lakeinlet.incremental.model import Ref

GLOB = re.compile(r"([\\\[\]{}*?])")


def with_lines(spark: SparkSession, uri: Callable[[Ref], str], malformed: DataFrame, refs: list[Ref]
               ) -> DataFrame:
    """Line numbers (1-based) of malformed records: only their objects are read again (where
    `uri` says: a staged copy's bytes are its object's), as
    text; the n-th copy of a line in an object matches the n-th malformed copy of it. All in
    the JVM: executors need no Python worker (a split file's parts keep their order)."""
    lines: Any = None
    for bucket, key in refs:
        path = GLOB.sub(r"\\\1", uri((bucket, key)))
        text = spark.read.text(path).select(
            F.lit(bucket).alias("_source_bucket"), F.lit(key).alias("_source_key"),
            F.col("value").alias("record"), F.monotonically_increasing_id().alias("_pos"))
        numbered = text.withColumn("line", F.row_number().over(Window.orderBy("_pos"))).drop("_pos")
        lines = numbered if lines is None else lines.unionByName(numbered)
    by_text = ["_source_bucket", "_source_key", "record"]
    found = lines.withColumn("_n", F.row_number().over(Window.partitionBy(*by_text).orderBy("line")))
    order = Window.partitionBy(*by_text).orderBy(F.monotonically_increasing_id())
    return malformed.withColumn("_n", F.row_number().over(order)) \
        .join(found, [*by_text, "_n"], "left").drop("_n")
