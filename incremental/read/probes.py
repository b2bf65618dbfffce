"""The Spark reads some checks need besides the batch's own: one object alone (strictly, or for
its column types), footer row counts, and the per-object aggregate of the batch's read. They
return what they read; `checks` judges it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lakeinlet import column_names
from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.model import PlannedObject, Ref
from lakeinlet.incremental.read import hint_casts
from lakeinlet.incremental.read.checks import Seen
from lakeinlet.incremental.read.rescue import RESCUED_COUNT
from lakeinlet.incremental.read.schema_hints import FLAG
from lakeinlet.incremental.settings import ReadSection


class Opener(Protocol):
    """How a batch's objects are opened (`reader.SparkReader` is one)."""

    spark: Any
    settings: ReadSection
    schema: Any
    hints: Mapping[str, tuple[str, Any]]

    @property
    def multiline(self) -> bool: ...

    def uri(self, o: PlannedObject) -> str: ...

    def load_path(self, o: PlannedObject) -> str: ...

    def reader(self, strict: bool = False, merge: bool = True) -> Any: ...


def per_object(df: DataFrame, has_corrupt: bool, decoded: Sequence[str] = ()) -> dict[Ref, Seen]:
    """One aggregation (it also fills the cache): rows, malformed records, size and mtime, and
    rows holding U+FFFD in one of the `decoded` string columns (JSON/CSV: text Spark decoded)."""
    bad = F.col("_corrupt_record").isNotNull() if has_corrupt else F.lit(False)
    text = F.concat_ws("", *map(column_names.col, decoded)) if decoded else F.lit("")
    rescued = F.col(RESCUED_COUNT) if RESCUED_COUNT in df.columns else F.lit(0)
    unhinted = F.array_join(F.array_sort(F.array_distinct(F.flatten(F.collect_set(FLAG)))), "; column ") \
        if FLAG in df.columns else F.lit("")
    agg = df.groupBy("_source_bucket", "_source_key").agg(
        F.sum(F.when(bad, 0).otherwise(1)).alias("rows"), F.sum(F.when(bad, 1).otherwise(0)).alias("bad"),
        F.max("_lakeinlet_file_size").alias("size"), F.max("_lakeinlet_file_mtime").alias("mtime"),
        F.count_if(~bad & text.contains("\ufffd")).alias("replaced"),
        F.sum(F.when(bad, 0).otherwise(rescued)).alias("rescued"), unhinted.alias("unhinted"))
    return {(r["_source_bucket"], r["_source_key"]): Seen(
        int(r["rows"]), int(r["bad"]), r["size"], r["mtime"], int(r["replaced"]), int(r["rescued"] or 0),
        r["unhinted"] or "") for r in agg.collect()}


def one_pass_metrics() -> list[Any]:
    """What a one-pass write observes (per-row counts only): every row, and rows whose file path
    found no lineage (`model.WriteCheck` judges them)."""
    return [F.count(F.lit(1)).alias("rows"), F.count_if(F.col("_source_key").isNull()).alias("unmatched")]


def parsed_alone(opener: Opener, o: PlannedObject) -> int | BaseException:
    """The rows of one object read alone, strictly (FAILFAST), every column parsed (a count
    alone parses nothing), or the error that stopped the read."""
    try:
        df = opener.reader(strict=True).load(opener.load_path(o))
        parsed = F.to_json(F.struct(*map(column_names.col, df.columns))) if df.columns else F.lit("")
        return int(df.agg(F.count(parsed), F.sum(F.length(parsed))).first()[0])
    except Exception as exc:  # Spark raises Py4J/Analysis errors: classify by their root cause
        return exc


def spark_footer_rows(opener: Opener, objs: Sequence[PlannedObject]) -> dict[Ref, int]:
    """Footer row counts through Spark: a count without columns reads footers only."""
    if not objs:
        return {}
    counted = opener.reader().load([opener.load_path(o) for o in objs]) \
        .select(F.col("_metadata.file_path").alias("p")).groupBy("p").count().collect()
    by_path = dict(zip(lakejvm.path_uris(opener.spark, map(opener.uri, objs)), objs, strict=True))
    return {(o.bucket, o.key): int(r["count"]) for r in counted if (o := by_path.get(r["p"]))}


def object_types(opener: Opener, o: PlannedObject) -> dict[str, Any] | None:
    """Column → Spark type of one object alone (None when it cannot be read)."""
    try:
        return hint_casts.viewed(opener, {f.name: f.dataType for f in
                                       opener.reader().load(opener.load_path(o)).schema.fields})
    except Exception:  # unreadable objects are named by the checks after the read
        return None


def typed_objects(opener: Opener, objs: Sequence[PlannedObject]) -> dict[Ref, dict[str, Any]]:
    """Each object's own column types (read alone, a few at a time), unreadable ones left out."""
    with ThreadPoolExecutor(4) as pool:
        found = pool.map(lambda o: object_types(opener, o), objs)
        return {(o.bucket, o.key): t for o, t in zip(objs, found, strict=True) if t is not None}


def reread(opener: Opener, objs: Sequence[PlannedObject]) -> DataFrame:
    """The batch's read again, over `objs` only (once others were set aside)."""
    return hint_casts.cast(opener, opener.reader().load([opener.load_path(o) for o in objs]))
