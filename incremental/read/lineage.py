"""Lineage columns of a batch's rows (bucket, key, etag, event time of the object each row comes
from), looked up by each row's file path, and the batch id."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from lakeinlet import column_names, fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read import checks, lineage_hash, probes

LINEAGE = ("_source_bucket", "_source_key", "_source_etag", "_source_event_time")
FILE_SIZE, FILE_MTIME = "_lakeinlet_file_size", "_lakeinlet_file_mtime"
MAP_LOOKUP_MAX = 16
"""Objects a batch may have for its lineage to be a literal map probed per row, not a join."""
MAP_PROBE_BUDGET = 20_000_000
"""Past MAP_LOOKUP_MAX objects, the map is still used while rows × objects (the key comparisons
its probes make at most) stays under this: a broadcast join costs a Spark job of its own, a map
probe per row is cheap for few rows (bench/lineage_rows.py measures both)."""


def with_lineage(spark: SparkSession, uri: Callable[[PlannedObject], str], raw: DataFrame,
                 objs: Sequence[PlannedObject], batch_id: str, rows: int | None = None,
                 seen: Observation | None = None) -> DataFrame:
    """Lineage columns looked up by each row's file path; with `seen`, the rows and the rows
    without lineage are observed on the way (what a one-pass write checks), and the file's
    size and mtime (for the checked read's per-object checks) are left out.

    The lookup table is one JSON literal that the JVM parses (a DataFrame made from Python
    rows would start a Python worker to read them). Up to
    `MAP_LOOKUP_MAX` objects, or while `rows` (the footers' count, when known) times the
    objects stays under `MAP_PROBE_BUDGET`, it is a literal map probed per row (no join, no
    broadcast stage); past that, a broadcast hash join (a map probe scans its keys), on a
    64-bit hash of the path when the batch's paths have distinct hashes (every row's path is
    one of them: a hash then names one path), else on the path. Spark inlines the probe into
    each lineage column (a probe per column per row); an observation between the probe and the
    columns would stop that, but is slower, as the struct is then copied row by row
    (bench/lineage_rows.py measures these choices)."""
    table: dict[str, dict[str, Any]] = {}
    for o, path in zip(objs, lakejvm.path_uris(spark, map(uri, objs)), strict=True):
        values = [o.bucket, o.key, o.etag, checks.micros(o.event_time)]
        table[path] = dict(zip(LINEAGE, values, strict=True))
    struct = "struct<" + ",".join(f"{c}:{'bigint' if c.endswith('time') else 'string'}"
                                  for c in LINEAGE) + ">"
    lookup = F.from_json(F.lit(json.dumps(table)), f"map<string,{struct}>")
    with_meta = raw.select("*", F.col("_metadata.file_path").alias("_path"),
                           F.col("_metadata.file_size").alias(FILE_SIZE),
                           F.col("_metadata.file_modification_time").alias(FILE_MTIME))
    if len(table) <= MAP_LOOKUP_MAX or (rows is not None and rows * len(table) <= MAP_PROBE_BUDGET):
        found = with_meta.select("*", lookup[F.col("_path")].alias("_lineage"))
    else:
        paths = spark.range(1).select(F.explode(lookup).alias("_path", "_lineage"))
        key = "_path"
        if fast_paths.enabled("lineage-hash") and lineage_hash.distinct_hashes(list(table)):
            key = "_path_hash"
            paths = paths.select(F.xxhash64("_path").alias(key), "_lineage")
            with_meta = with_meta.select("*", F.xxhash64("_path").alias(key))
        found = with_meta.join(F.broadcast(paths), key, "left")
    lineage = [(F.timestamp_micros(F.col("_lineage")[c]) if c.endswith("time")
                else F.col("_lineage")[c]).alias(c) for c in LINEAGE]
    out = found.select(*(column_names.col(c) for c in with_meta.columns
                         if c not in ("_path", "_path_hash")), *lineage,
                       F.lit(batch_id).alias("_ingest_batch"))
    if seen is None:
        return out
    return out.drop(FILE_SIZE, FILE_MTIME).observe(seen, *probes.one_pass_metrics())

