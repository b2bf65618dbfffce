"""Rows of replaced objects marked deleted, so that one Hudi upsert both adds a batch's rows and
deletes the table's earlier rows of the same objects (`--on-overwrite replace`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.hudi.write_options import META_COLUMNS

DELETE_MARKER = "\x00lakeinlet:replaced"
"""A value no S3 key can hold (S3 keys cannot carry NUL): rows written with it as _source_key
are deletions (Hudi's payload delete marker), so one upsert both adds and deletes rows."""
REPLACING = {"hoodie.payload.delete.field": "_source_key", "hoodie.payload.delete.marker": DELETE_MARKER}
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def rows_of(spark: Any, spark_uri: str,
            objs: Sequence[PlannedObject]) -> tuple[Any, dict[tuple[str, str], int]]:
    """The table's rows of `objs` (with Hudi's meta columns) and their count per (bucket, key)."""
    rows = spark.read.format("hudi").load(spark_uri).where(tc.keys_sql(objs))
    counts = {(r[0], r[1]): int(r[2]) for r in
              rows.groupBy("_source_bucket", "_source_key").count().collect()}
    return rows, counts


def with_deletions(data: Any, victims: Any, batch_id: str, keys: Any, record_key: str | None,
                   partition_by: Sequence[str]) -> Any:
    """The batch's rows plus `victims` marked deleted, for one upsert: a victim's
    _source_key becomes the delete marker (no column is added to the table). A keyed table
    keys both sides by its record key, and a victim the batch rewrites under the same key
    and partition (in `keys`, None: `data`; the batch read again, so that a one-pass
    write's `data` is read once, as its row count assumes) is left to the upsert; a keyless
    table's victims keep their generated keys and meta columns (Hudi looks their files up by
    them), and the batch's rows get keys of their own (Hudi generates none in an upsert)."""
    from pyspark.sql import functions as F

    if data is None:
        return victims.withColumn("_source_key", F.lit(DELETE_MARKER))
    if record_key:
        same = [*record_key.split(","), *partition_by]
        rewritten = (data if keys is None else keys).select(*same).distinct()
        victims = victims.join(rewritten, same, "left_anti").drop(*META_COLUMNS)
    else:
        data = data.withColumn("_hoodie_record_key", F.concat(
            F.lit(f"{batch_id}_"), F.monotonically_increasing_id().cast("string"))).withColumn(
            "_hoodie_partition_path", partition_path(partition_by))
    victims = victims.withColumn("_source_key", F.lit(DELETE_MARKER))
    wanted = {*data.columns, *META_COLUMNS}
    return data.unionByName(victims.select(*(c for c in victims.columns if c in wanted)),
                            allowMissingColumns=True)


def partition_path(partition_by: Sequence[str]) -> Any:
    """The hive-style partition path Hudi gives a row (`a=1/b=x`), as a column."""
    from pyspark.sql import functions as F

    from lakeinlet import column_names

    if not partition_by:
        return F.lit("")
    return F.concat_ws("/", *(F.concat(F.lit(f"{c}="), F.coalesce(
        column_names.col(c).cast("string"), F.lit(HIVE_DEFAULT_PARTITION))) for c in partition_by))
