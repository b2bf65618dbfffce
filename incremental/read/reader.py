"""Adapter: Spark reads one batch's objects in one read, adds lineage, and sets aside (see `checks`)
every object that cannot be loaded whole; bad input never fails the batch."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.window import Window

from lakeinlet import column_names, fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import FILTERED, PlannedObject, Ref
from lakeinlet.incremental.ports import NOTHING_READ, OVERWRITTEN, Footer, ObjectHead, ReadBatch
from lakeinlet.incremental.read import case_names, checks, file_index, isolate, lineage_hash, paths, sniff
from lakeinlet.incremental.read.file_index import Planned
from lakeinlet.incremental.settings import ReadSection

CORRUPT_COL = "_corrupt_record"
LINEAGE = ("_source_bucket", "_source_key", "_source_etag", "_source_event_time")
FILE_SIZE, FILE_MTIME = "_lakeinlet_file_size", "_lakeinlet_file_mtime"
MAP_LOOKUP_MAX = 16
"""Objects a batch may have for its lineage to be a literal map probed per row, not a join."""
MAP_PROBE_BUDGET = 20_000_000
"""Past MAP_LOOKUP_MAX objects, the map is still used while rows × objects (the key comparisons
its probes make at most) stays under this: a broadcast join costs a Spark job of its own, a map
probe per row is cheap for few rows (bench/lineage_rows.py measures both)."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
GLOB = re.compile(r"([\\\[\]{}*?])")
Failed = dict[Ref, tuple[str, str]]
FooterReader = Callable[[Sequence[PlannedObject], Mapping[Ref, ObjectHead]], dict[Ref, Footer | str]]


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
    """Reads planned objects with Spark's native readers; nothing is written here."""

    def __init__(self, spark: SparkSession, read: ReadSection, scheme: str,
                 footers: FooterReader | None = None) -> None:
        """`footers` reads Parquet footers without Spark (the object store's `footers`): their
        row counts are checked against the rows read, and a batch whose footers all have one
        schema is read without merging schemas (a Spark job less). Without it Spark does both."""
        self.spark, self.settings, self.scheme, self.footers = spark, read, scheme, footers
        self.schema = parse_schema(read.schema)
        self.text = read.source_format in ("json", "csv")

    def uri(self, o: PlannedObject) -> str:
        return f"{self.scheme}://{o.bucket}/{o.key}"

    def load_path(self, o: PlannedObject) -> str:
        """The object's path with Hadoop glob characters escaped: `in/a[1].json` is that object."""
        return GLOB.sub(r"\\\1", self.uri(o))

    @property
    def multiline(self) -> bool:
        """Whether JSON/CSV records may span lines (`multiLine=true`)."""
        return self._option("multiLine") == "true"

    def _option(self, name: str) -> str:
        """A read option's value, lower case ("" when unset): Spark takes option names in any case."""
        found = {k.lower(): v for k, v in self.settings.options.items()}
        return str(found.get(name.lower(), "")).lower()

    def reader(self, strict: bool = False, merge: bool = True) -> Any:
        """Spark's reader for the source format; `strict` fails on the first bad byte; `merge`
        (Parquet without --schema) merges the files' schemas."""
        options, schema = self._options(strict, merge)
        r = self.spark.read.format(self.settings.source_format).options(**options)
        return r if schema is None else r.schema(schema)

    def _options(self, strict: bool, merge: bool) -> tuple[dict[str, str], T.StructType | None]:
        """The reader's options and schema (see `reader`)."""
        options = dict(self.settings.options)
        if self.text:
            options |= {"mode": "FAILFAST"} if strict else {
                "mode": "PERMISSIVE", "columnNameOfCorruptRecord": CORRUPT_COL}
        elif not strict:
            options["ignoreCorruptFiles"] = "true"
        if self.settings.source_format == "parquet" and self.schema is None and merge:
            options["mergeSchema"] = "true"
        if not strict:
            options["ignoreMissingFiles"] = "true"
        if self.schema is None:
            return options, None
        extra = [T.StructField(CORRUPT_COL, T.StringType())] if self.text and not strict else []
        return options, T.StructType(self.schema.fields + extra)

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
             heads: Mapping[Ref, ObjectHead] | None = None, single_pass: bool = False) -> ReadBatch:
        """`_read`; when its Spark job fails, the objects that fail alone are set aside (`isolate`)
        and the others are read again: one object never fails its batch."""
        try:
            return self._read(objs, batch_id, table_schema, heads, single_pass)
        except TerminalError:
            raise
        except Exception as exc:  # py4j's and Spark's errors alike: objects read apart tell which
            found = isolate.failing_alone(
                lambda some: self._read(some, batch_id, table_schema, heads).release(), objs, exc)
            if not found:
                raise
        rest = [o for o in objs if (o.bucket, o.key) not in found]
        batch = self.read(rest, batch_id, table_schema, heads, single_pass) if rest else \
            ReadBatch(None, None, {}, {}, {})
        return replace(batch, failed=batch.failed | found)

    def _read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
              heads: Mapping[Ref, ObjectHead] | None = None, single_pass: bool = False) -> ReadBatch:
        """One Spark read over all objects, validated and counted per object (one job), cached.

        With `single_pass` (the target checks between writing and committing) a Parquet batch
        whose footers were all read, each with rows, and whose planned files still have the size
        and mtime their HEADs saw, is not read ahead of the write: the write itself counts the
        rows (an Observation), and the batch's `verify` holds them to the footers (see
        `checks.one_pass`). Sizes and mtimes are compared once per file at planning, not per row:
        the plan's file statuses are what Spark reports as each row's `_metadata`."""
        failed: Failed = paths.elsewhere(self.spark, self.uri, objs)  # lineage is by the literal key
        if self.settings.source_format == "json":
            failed |= sniff.cut_short(objs, heads or {}, self.multiline)
        objs = [o for o in objs if (o.bucket, o.key) not in failed]
        footers = self._footers(objs, heads or {}, failed)
        objs = [o for o in objs if (o.bucket, o.key) not in failed]
        merge = not one_schema(objs, footers)
        planned: Planned = {}
        raw, objs = self._load(objs, failed, table_schema, merge, planned, heads)
        if raw is not None and self.text and not set(raw.columns) - {CORRUPT_COL}:
            # Not one record of the batch parsed, so its inferred schema is the corrupt-record
            # column alone, which Spark refuses to query; each object is judged read alone.
            failed |= {(o.bucket, o.key): why for o in objs if (why := checks.no_rows(
                self, o, None, getattr((heads or {}).get((o.bucket, o.key)), "first", None)))}
            raw = None
        if raw is not None:
            raw, objs = checks.reconcile(self, raw, objs, table_schema, failed)
        if raw is None or not objs:
            return ReadBatch(None, None, {}, {}, failed)
        if single_pass and fast_paths.enabled("one-pass") and not self.text and all(
                (f := footers.get((o.bucket, o.key))) is not None and f.rows > 0 for o in objs) \
                and self._as_headed(objs, heads or {}, planned or file_index.planned_files(raw)):
            rows = sum(footers[(o.bucket, o.key)].rows for o in objs)
            observed = Observation(f"lakeinlet-{batch_id}")
            return self._one_pass(self._with_lineage(raw, objs, batch_id, rows, observed), objs,
                                  footers, failed, observed)
        df = self._with_lineage(raw, objs, batch_id).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            seen = checks.per_object(df, CORRUPT_COL in df.columns, self._decoded(raw))
        except Exception:
            df.unpersist()
            raise
        failed |= checks.problems(self, objs, seen, heads or {}, footers)
        return self._batch(df, seen, failed)

    def _decoded(self, raw: DataFrame) -> list[str]:
        """The string columns of a JSON/CSV read: text Spark decoded with the reader's charset."""
        return [f.name for f in raw.schema.fields if self.text and f.name != CORRUPT_COL
                and isinstance(f.dataType, T.StringType)]

    def _footers(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead],
                 failed: Failed) -> dict[Ref, Footer]:
        """Parquet footers read before Spark's read; an object overwritten since its HEAD is
        not read at all (its newer version's event loads it)."""
        if self.footers is None or self.settings.source_format != "parquet" or not objs:
            return {}
        out: dict[Ref, Footer] = {}
        for ref, f in self.footers(objs, heads).items():
            if isinstance(f, Footer):
                out[ref] = f
            elif f == OVERWRITTEN:
                failed[ref] = (FILTERED, "object overwritten during the load (etag changed since "
                                         "its HEAD); its newer version's event loads it")
        return out

    def _load(self, objs: Sequence[PlannedObject], failed: Failed, table: Any | None,
              merge: bool = True, planned: Planned | None = None,
              heads: Mapping[Ref, ObjectHead] | None = None
              ) -> tuple[DataFrame | None, list[PlannedObject]]:
        """The bulk read; Spark checks that every path exists when planning the read, so an
        object deleted since the HEAD is set aside as missing and the read is planned again (any
        other object that breaks the planning is found and set aside: `paths.unplannable`).
        Parquet with a schema is planned from file statuses built from `heads` or fetched in
        parallel (`_indexed`, which fills `planned` with them)."""
        left = list(objs)
        if left and self.settings.source_format == "parquet" and self.schema is not None \
                and fast_paths.enabled("file-index") and file_index.usable("read"):
            try:
                return self._indexed(left, failed, planned if planned is not None else {}, heads)
            except Exception as exc:  # Spark's own planning below decides (a fast path never fails a read)
                file_index.fell_back("read", exc)
        while left:
            try:
                return self.reader(merge=merge).load([self.load_path(o) for o in left]), left
            except Exception as exc:  # AnalysisException, or py4j's wrapper of a SparkException
                if checks.is_merge_conflict(exc):
                    return checks.split_conflicting(self, left, failed, table)
                if case_names.is_case_conflict(exc) and \
                        len(kept := case_names.split(self, left, failed, table)) < len(left):
                    left = kept
                    continue
                found = paths.not_found(self.uri, left, exc) or paths.unplannable(
                    lambda some: self.reader(merge=merge).load(list(map(self.load_path, some))), left, exc)
                if not found:
                    raise
                failed |= found
                left = [o for o in left if (o.bucket, o.key) not in found]
        return None, left

    def _indexed(self, objs: Sequence[PlannedObject], failed: Failed, planned: Planned,
                 heads: Mapping[Ref, ObjectHead] | None = None
                 ) -> tuple[DataFrame | None, list[PlannedObject]]:
        options, schema = self._options(strict=False, merge=False)
        assert schema is not None
        return file_index.indexed_read(self.spark, self.uri, options, schema, objs, failed, planned, heads)

    def _with_lineage(self, raw: DataFrame, objs: Sequence[PlannedObject], batch_id: str,
                      rows: int | None = None, seen: Observation | None = None) -> DataFrame:
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
        for o, path in zip(objs, lakejvm.path_uris(self.spark, map(self.uri, objs)), strict=True):
            values = [o.bucket, o.key, o.etag, _micros(o.event_time)]
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
            paths = self.spark.range(1).select(F.explode(lookup).alias("_path", "_lineage"))
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
        return out.drop(FILE_SIZE, FILE_MTIME).observe(seen, *checks.one_pass_metrics())

    def _as_headed(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead],
                   planned: Planned | None) -> bool:
        """Whether every object's planned file has the size its HEAD saw and an mtime less than
        a second after the HEAD's (else it was overwritten since: the checked read names it).
        False when the plan's files are not known."""
        if not planned:
            return False
        for o, path in zip(objs, lakejvm.path_uris(self.spark, map(self.uri, objs)), strict=True):
            status = planned.get(path)
            if status is None:
                return False
            head = heads.get((o.bucket, o.key))
            mtime = _micros(head.last_modified) if head is not None else None
            if head is not None and (status[0] != head.size or
                                     (mtime is not None and status[1] - mtime // 1000 >= 1000)):
                return False
        return True

    def _one_pass(self, df: DataFrame, objs: Sequence[PlannedObject], footers: Mapping[Ref, Footer],
                  failed: Failed, seen: Observation) -> ReadBatch:
        """The rows as the write will read them, observed (`_with_lineage` with `seen`): rows and
        rows without lineage; rows per object are the footers', which `verify` holds the write to."""
        rows = {(o.bucket, o.key): footers[(o.bucket, o.key)].rows for o in objs}
        return ReadBatch(df, to_arrow_schema(df.schema), rows, {}, failed,
                         verify=lambda: checks.one_pass(seen.get, objs, footers))

    def _batch(self, df: DataFrame, seen: dict[Ref, checks.Seen], failed: Failed) -> ReadBatch:
        if (None, None) in seen:
            raise TerminalError("rows without lineage (file path not matched): please report this")
        rows = {ref: s.rows for ref, s in seen.items() if ref not in failed}
        bad = {ref: s.bad for ref, s in seen.items() if s.bad}
        replaced = {ref: s.replaced for ref, s in seen.items() if s.replaced and ref not in failed}
        keep, malformed = _drop_failed(df, failed), None
        if CORRUPT_COL in df.columns:
            if bad:
                malformed = self._with_lines(df.filter(F.col(CORRUPT_COL).isNotNull()).select(
                    *LINEAGE, "_ingest_batch", F.col(CORRUPT_COL).alias("record")), list(bad))
            keep = keep.filter(F.col(CORRUPT_COL).isNull()).drop(CORRUPT_COL)
        keep = keep.drop(FILE_SIZE, FILE_MTIME)
        if not any(rows.values()):
            df.unpersist()
            return ReadBatch(None, None, rows, bad, failed)
        return ReadBatch(keep, to_arrow_schema(keep.schema), rows, bad, failed, malformed, cached=(df,),
                         replaced=replaced)


    def _with_lines(self, malformed: DataFrame, refs: list[Ref]) -> DataFrame:
        """Line numbers (1-based) of malformed records: only their objects are read again, as
        text; the n-th copy of a line in an object matches the n-th malformed copy of it. All in
        the JVM: executors need no Python worker (a split file's parts keep their order)."""
        lines: Any = None
        for bucket, key in refs:
            path = GLOB.sub(r"\\\1", f"{self.scheme}://{bucket}/{key}")
            text = self.spark.read.text(path).select(
                F.lit(bucket).alias("_source_bucket"), F.lit(key).alias("_source_key"),
                F.col("value").alias("record"), F.monotonically_increasing_id().alias("_pos"))
            numbered = text.withColumn("line", F.row_number().over(Window.orderBy("_pos"))).drop("_pos")
            lines = numbered if lines is None else lines.unionByName(numbered)
        by_text = ["_source_bucket", "_source_key", "record"]
        found = lines.withColumn("_n", F.row_number().over(Window.partitionBy(*by_text).orderBy("line")))
        order = Window.partitionBy(*by_text).orderBy(F.monotonically_increasing_id())
        return malformed.withColumn("_n", F.row_number().over(order)) \
            .join(found, [*by_text, "_n"], "left").drop("_n")


def one_schema(objs: Sequence[PlannedObject], footers: Mapping[Ref, Footer]) -> bool:
    """Whether every object's footer was read and all have the same Parquet schema (then
    merging schemas changes nothing)."""
    found = [footers.get((o.bucket, o.key)) for o in objs]
    first = found[0] if found else None
    return first is not None and all(f is not None and f.schema.equals(first.schema) for f in found)


def _micros(t: datetime | None) -> int | None:
    """Microseconds since the epoch, exactly (a naive time is local, as Spark would take it)."""
    if t is None:
        return None
    aware = t if t.tzinfo is not None else t.astimezone()
    return (aware - EPOCH) // timedelta(microseconds=1)


def _drop_failed(df: DataFrame, failed: Failed) -> DataFrame:
    if not failed:
        return df
    ref = F.concat_ws("\x1f", F.col("_source_bucket"), F.col("_source_key"))
    return df.filter(~ref.isin([f"{b}\x1f{k}" for b, k in failed]))


__all__ = ["CORRUPT_COL", "NOTHING_READ", "SparkReader", "parse_schema"]
