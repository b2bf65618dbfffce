"""Adapter: Spark reads one batch's objects in one read, adds lineage, and sets aside (see `checks`)
every object that cannot be loaded whole; bad input never fails the batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from lakeinlet import fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import FILTERED, PlannedObject, Ref, WriteCheck
from lakeinlet.incremental.ports import NOTHING_READ, OVERWRITTEN, Footer, ObjectHead, ReadBatch
from lakeinlet.incremental.read import (
    avro_schemas,
    case_names,
    checks,
    codecs,
    conflicts,
    file_index,
    formats,
    isolate,
    judge,
    key_columns,
    lineage,
    malformed,
    paths,
    probes,
    rescue,
    schema_hints,
    sniff,
)
from lakeinlet.incremental.read import staging as staging_
from lakeinlet.incremental.read.checks import Seen, one_schema
from lakeinlet.incremental.read.explicit_schema import parse_schema
from lakeinlet.incremental.read.malformed import GLOB
from lakeinlet.incremental.read.verdicts import Failed, Loaded
from lakeinlet.incremental.settings import ReadSection

CORRUPT_COL = "_corrupt_record"
LINEAGE = lineage.LINEAGE
FooterReader = Callable[[Sequence[PlannedObject], Mapping[Ref, ObjectHead]], dict[Ref, Footer | str]]


class SparkReader:
    """Reads planned objects with Spark's native readers; nothing is written here."""

    def __init__(self, spark: SparkSession, read: ReadSection, scheme: str,
                 footers: FooterReader | None = None, prefixes: Sequence[str] = (),
                 staging: staging_.Staging | None = None) -> None:
        """`footers` reads Parquet footers without Spark (the object store's `footers`): their
        row counts are checked against the rows read, and a batch whose footers all have one
        schema is read without merging schemas (a Spark job less). Without it Spark does both.
        `prefixes` (--prefix) are where partition folders of keys start (`key_columns`).
        `staging` copies compressed objects under keys without their codec's suffix (`staging`;
        without it they are set aside)."""
        self.spark, self.settings, self.scheme, self.footers = spark, read, scheme, footers
        self.staging, self.copies = staging, staging_.Copies()
        self.prefixes = tuple(prefixes)
        self.schema = parse_schema(read.schema)
        self.hints: Mapping[str, tuple[str, Any]] = schema_hints.parse(read.schema_hints)
        self.text = read.source_format in formats.TEXT

    def uri(self, o: PlannedObject) -> str:
        """Where Spark reads the object: its key, or its staged copy (`staging`)."""
        return self._ref_uri((o.bucket, o.key))

    def source_uri(self, o: PlannedObject) -> str:
        return f"{self.scheme}://{o.bucket}/{o.key}"

    def _ref_uri(self, ref: Ref) -> str:
        return self.copies.uris.get(ref) or f"{self.scheme}://{ref[0]}/{ref[1]}"

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
        """`_isolating` over the batch's objects, those under a key without their codec's suffix
        read from staged copies, which the batch's `release` deletes."""
        heads = heads or {}
        self.copies = self.staging.copy(objs, heads, batch_id) if self.staging is not None and \
            self.settings.source_format in formats.SNIFFED else staging_.Copies()
        try:
            batch = self._isolating([o for o in objs if (o.bucket, o.key) not in self.copies.failed],
                                    batch_id, table_schema, {**heads, **self.copies.heads}, single_pass)
        except BaseException:
            self.copies.unpersist()
            raise
        return replace(batch, failed=batch.failed | self.copies.failed, cached=(*batch.cached, self.copies))

    def _isolating(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
                   heads: Mapping[Ref, ObjectHead], single_pass: bool = False) -> ReadBatch:
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
        batch = self._isolating(rest, batch_id, table_schema, heads, single_pass) if rest else \
            ReadBatch(None, None, {}, {}, {})
        return replace(batch, failed=batch.failed | found)

    def _read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
              heads: Mapping[Ref, ObjectHead] | None = None, single_pass: bool = False) -> ReadBatch:
        """One Spark read over all objects, validated and counted per object (one job), cached.

        With `single_pass` (the target checks between writing and committing) a Parquet batch
        whose footers were all read, each with rows, and whose planned files still have the size
        and mtime their HEADs saw, is not read ahead of the write: the write itself counts the
        rows (an Observation), and the batch's `verify` holds them to the footers (see
        `model.WriteCheck`). Sizes and mtimes are compared once per file at planning, not per
        row: the plan's file statuses are what Spark reports as each row's `_metadata`."""
        heads = heads or {}
        keys = key_columns.plan(self.spark, objs, self.prefixes, self.settings, self.schema, table_schema)
        loaded, footers = self._planned([o for o in objs if (o.bucket, o.key) not in keys.failed],
                                        heads, table_schema)
        raw, objs, failed = loaded.df, loaded.objs, loaded.failed | keys.failed
        if raw is None or not objs:
            return ReadBatch(None, None, {}, {}, failed)
        if single_pass and fast_paths.enabled("one-pass") and not self.text \
                and rescue.RESCUED_COUNT not in raw.columns and all(
                (f := footers.get((o.bucket, o.key))) is not None and f.rows > 0 for o in objs) \
                and (planned := loaded.planned or file_index.planned_files(raw)) \
                and checks.as_headed(objs, lakejvm.path_uris(self.spark, map(self.uri, objs)), heads,
                                     planned):
            rows = sum(footers[(o.bucket, o.key)].rows for o in objs)
            observed = Observation(f"lakeinlet-{batch_id}")
            return self._one_pass(keys.add(self._with_lineage(raw, objs, batch_id, rows, observed)),
                                  objs, footers, failed, observed)
        df = keys.add(self._with_lineage(raw, objs, batch_id)).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            seen = probes.per_object(df, CORRUPT_COL in df.columns, self._decoded(raw))
        except Exception:
            df.unpersist()
            raise
        return self._batch(df, seen, failed | judge.problems(self, objs, seen, heads, footers))

    def _planned(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead],
                 table_schema: Any | None) -> tuple[Loaded, dict[Ref, Footer]]:
        """The batch's read before its rows are counted: objects set aside before it (another
        key's path, JSON records cut short, overwritten since their footers), the bulk read, and
        its types reconciled with the table's; with the footers read."""
        failed = paths.elsewhere(self.spark, self.source_uri, objs)  # lineage is by the literal key
        if self.settings.source_format in formats.SNIFFED:
            failed |= codecs.set_aside([o for o in objs if (o.bucket, o.key) not in self.copies.uris], heads)
        if self.settings.source_format == "json":
            failed |= sniff.cut_short(objs, heads, self.multiline)
        footers, overwritten = self._footers([o for o in objs if (o.bucket, o.key) not in failed], heads)
        failed |= overwritten
        objs = [o for o in objs if (o.bucket, o.key) not in failed]
        loaded = self._load(objs, table_schema, not one_schema(objs, footers), heads)
        raw, objs, failed = loaded.df, loaded.objs, failed | loaded.failed
        if raw is not None and self.text and not set(raw.columns) - {CORRUPT_COL}:
            # Not one record of the batch parsed, so its inferred schema is the corrupt-record
            # column alone, which Spark refuses to query; each object is judged read alone.
            failed |= {(o.bucket, o.key): why for o in objs if (why := judge.no_rows(
                self, o, None, getattr(heads.get((o.bucket, o.key)), "first", None)))}
            raw = None
        if raw is not None:
            fixed = conflicts.hinted(self, raw, objs, table_schema)
            raw, objs, failed = fixed.df, fixed.objs, failed | fixed.failed
        return Loaded(raw, objs, failed, loaded.planned), footers

    def _decoded(self, raw: DataFrame) -> list[str]:
        """The string columns of a JSON/CSV read: text Spark decoded with the reader's charset."""
        own = (CORRUPT_COL, schema_hints.FLAG)
        return [f.name for f in raw.schema.fields if self.text and f.name not in own
                and isinstance(f.dataType, T.StringType)]

    def _footers(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead]
                 ) -> tuple[dict[Ref, Footer], Failed]:
        """Parquet footers read before Spark's read, and the objects overwritten since their HEAD,
        which are not read at all (their newer version's event loads them)."""
        if self.footers is None or self.settings.source_format != "parquet" or not objs:
            return {}, {}
        found = self.footers(objs, heads)
        why = ("object overwritten during the load (etag changed since its HEAD); "
               "its newer version's event loads it")
        return {ref: f for ref, f in found.items() if isinstance(f, Footer)}, {
            ref: (FILTERED, why) for ref, f in found.items() if f == OVERWRITTEN}

    def _load(self, objs: Sequence[PlannedObject], table: Any | None, merge: bool = True,
              heads: Mapping[Ref, ObjectHead] | None = None) -> Loaded:
        """The bulk read; Spark checks that every path exists when planning the read, so an
        object deleted since the HEAD is set aside as missing and the read is planned again (any
        other object that breaks the planning is found and set aside: `paths.unplannable`).
        Parquet or JSON with a schema is planned from file statuses built from `heads` or fetched
        in parallel (`_indexed`, whose value holds them)."""
        left: list[PlannedObject] = list(objs)
        failed: Failed = {}
        if left and self.settings.source_format in file_index.FILE_FORMATS and self.schema is not None \
                and fast_paths.enabled("file-index") and file_index.usable("read"):
            try:
                return self._indexed(left, heads)
            except Exception as exc:  # Spark's own planning below decides (a fast path never fails a read)
                file_index.fell_back("read", exc)
        while left:
            try:
                raw, aside = avro_schemas.bulk(self, left, merge)
                left = [o for o in left if (o.bucket, o.key) not in aside]
                return Loaded(raw if left else None, left, failed | aside)
            except Exception as exc:  # AnalysisException, or py4j's wrapper of a SparkException
                if checks.is_merge_conflict(exc):
                    split = conflicts.split_conflicting(self, left, table)
                    return replace(split, failed=failed | split.failed)
                found = self._set_aside(left, table, merge, exc)
                if not found:
                    raise
                failed |= found
                left = [o for o in left if (o.bucket, o.key) not in found]
        return Loaded(None, left, failed)

    def _set_aside(self, objs: list[PlannedObject], table: Any | None, merge: bool,
                   exc: BaseException) -> Failed:
        """The objects that broke the bulk read's planning with `exc` (empty: none found): column
        names that clash in case, else objects missing or unplannable (`paths`)."""
        if case_names.is_case_conflict(exc):
            kept, clashing = conflicts.case_split(self, objs, table)
            if len(kept) < len(objs):
                return clashing
        return paths.not_found(self.uri, objs, exc) or paths.unplannable(
            lambda some: self.reader(merge=merge).load(list(map(self.load_path, some))), objs, exc)

    def _indexed(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead] | None = None
                 ) -> Loaded:
        options, schema = self._options(strict=False, merge=False)
        assert schema is not None
        return file_index.indexed_read(self.spark, self.uri, options, schema, objs, heads,
                                       self.settings.source_format)

    def _with_lineage(self, raw: DataFrame, objs: Sequence[PlannedObject], batch_id: str,
                      rows: int | None = None, seen: Observation | None = None) -> DataFrame:
        """`lineage.with_lineage` over this reader's paths."""
        return lineage.with_lineage(self.spark, self.uri, raw, objs, batch_id, rows, seen)

    def _one_pass(self, df: DataFrame, objs: Sequence[PlannedObject], footers: Mapping[Ref, Footer],
                  failed: Failed, seen: Observation) -> ReadBatch:
        """The rows as the write will read them, observed (`_with_lineage` with `seen`): rows and
        rows without lineage; rows per object are the footers', which `verify` holds the write to."""
        rows = {(o.bucket, o.key): footers[(o.bucket, o.key)].rows for o in objs}
        return ReadBatch(df, to_arrow_schema(df.schema), rows, {}, failed,
                         verify=WriteCheck(sum(rows.values()), seen))

    def _batch(self, df: DataFrame, seen: dict[Ref, Seen], failed: Failed) -> ReadBatch:
        if (None, None) in seen:
            raise TerminalError("rows without lineage (file path not matched): please report this")
        rows = {ref: s.rows for ref, s in seen.items() if ref not in failed}
        bad = {ref: s.bad for ref, s in seen.items() if s.bad}
        replaced = {ref: s.replaced for ref, s in seen.items() if s.replaced and ref not in failed}
        rescued = {ref: s.rescued for ref, s in seen.items() if s.rescued and ref not in failed}
        keep, records = _drop_failed(df, failed), None
        if CORRUPT_COL in df.columns:
            if bad:
                records = malformed.with_lines(self.spark, self._ref_uri, df.filter(
                    F.col(CORRUPT_COL).isNotNull()).select(
                    *LINEAGE, "_ingest_batch", F.col(CORRUPT_COL).alias("record")), list(bad))
            keep = keep.filter(F.col(CORRUPT_COL).isNull()).drop(CORRUPT_COL)
        keep = keep.drop(lineage.FILE_SIZE, lineage.FILE_MTIME, rescue.RESCUED_COUNT, schema_hints.FLAG)
        if not any(rows.values()):
            df.unpersist()
            return ReadBatch(None, None, rows, bad, failed)
        return ReadBatch(keep, to_arrow_schema(keep.schema), rows, bad, failed, records, cached=(df,),
                         replaced=replaced, rescued=rescued)


def _drop_failed(df: DataFrame, failed: Failed) -> DataFrame:
    if not failed:
        return df
    ref = F.concat_ws("\x1f", F.col("_source_bucket"), F.col("_source_key"))
    return df.filter(~ref.isin([f"{b}\x1f{k}" for b, k in failed]))


__all__ = ["CORRUPT_COL", "NOTHING_READ", "SparkReader", "parse_schema"]
