"""The rows a Delta removal deletes: where they are (rows per object, the files holding them) and the
rows those files keep, which the target rewrites and commits in place of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.transaction import AddAction, RemoveAction

from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.targets import commits as tc


@dataclass(frozen=True)
class Found:
    """Rows per object found in the table, RemoveActions of the files holding them, and the rows
    those files keep (a Spark DataFrame) that replace them."""

    counts: dict[tuple[str, str], int]
    removes: list[AddAction | RemoveAction]
    keep: Any

    @property
    def removed_bytes(self) -> int:
        return sum(r.size or 0 for r in self.removes)


def find_rows(spark: Any, dt: DeltaTable, spark_uri: str, uri: str, partition_by: Sequence[str],
              objs: Sequence[PlannedObject]) -> Found | None:
    """The rows of `objs` in the table at `dt` (None: none there).

    Raises:
        TerminalError: files holding those rows do not match the log's paths (rewriting them
            without removing them would duplicate the kept rows).
    """
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    # dt's own schema, not the target's: that refreshes the shared DeltaTable in place, and a
    # compaction committed meanwhile would then go unnoticed by this removal's commit
    schema = pa.schema(dt.schema().to_arrow())
    df = removal_frame(spark, spark_uri, actions, partition_by, schema)
    if df is None:
        return None
    hit = df.where(tc.keys_sql(objs))
    counts = {(r[0], r[1]): int(r[2]) for r in
              hit.groupBy("_source_bucket", "_source_key").count().collect()}
    paths = {r[0] for r in hit.select("_path").distinct().collect()}
    if not paths:
        return None
    keep = df.where(df["_path"].isin(sorted(paths))).where(f"NOT ({tc.keys_sql(objs)})").drop("_path")
    removes = remove_actions(spark, spark_uri, actions, partition_by, paths)
    if len(removes) != len(paths):  # rewriting without removing would duplicate the kept rows
        raise TerminalError(f"{uri}: {len(paths)} files hold rows to delete but "
                            f"{len(removes)} of them match the log's paths (first: {min(paths)})")
    return Found(counts, removes, keep)


def remove_actions(spark: Any, spark_uri: str, actions: list[dict[str, Any]], partition_by: Sequence[str],
             paths: set[str]) -> list[AddAction | RemoveAction]:
    """RemoveActions of the log's files among `paths` (Spark's `_metadata.file_path` spelling)."""
    now = int(datetime.now(UTC).timestamp() * 1000)
    base = lakejvm.qualify(spark, spark_uri)  # a relative local table is read as file:/<abs>
    # in the form of Spark's _metadata.file_path, which `paths` holds
    spelled = lakejvm.path_uris(spark, (f"{base}/{a['path']}" for a in actions))
    return [RemoveAction(a["path"], True, now, a["size_bytes"], _partition_values(a, partition_by))
            for a, path in zip(actions, spelled, strict=True) if path in paths]


def removal_frame(spark: Any, root: str, actions: list[dict[str, Any]], partition_by: Sequence[str],
                  schema: pa.Schema | None) -> Any:
    """The table's rows with their file (`_path`), read file group by partition (partition values
    live in the folder names, not in the files), with the table's schema."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    if not actions or schema is None:
        return None
    data_schema = from_arrow_schema(pa.schema([f for f in schema if f.name not in partition_by]),
                                    prefer_timestamp_ntz=True)
    groups: dict[tuple[Any, ...], list[str]] = {}
    for a in actions:
        groups.setdefault(tuple(a.get(f"partition.{c}") for c in partition_by), []).append(
            f"{root}/{a['path']}")
    frames = []
    for values, paths in groups.items():
        df = spark.read.schema(data_schema).parquet(*paths).withColumn("_path", F.col("_metadata.file_path"))
        for col, value in zip(partition_by, values, strict=True):
            df = df.withColumn(col, F.lit(value).cast(
                from_arrow_schema(schema, prefer_timestamp_ntz=True)[col].dataType))
        frames.append(df)
    out = frames[0]
    for df in frames[1:]:
        out = out.unionByName(df)
    return out


def _partition_values(action: dict[str, Any], partition_by: Sequence[str]) -> dict[str, str | None]:
    return {c: (None if action.get(f"partition.{c}") is None else str(action[f"partition.{c}"]))
            for c in partition_by}
