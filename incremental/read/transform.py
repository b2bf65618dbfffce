"""Adapter: the transform step around the Spark reader. A batch's checked rows are shaped by SQL over
the view `source` or a Python hook, held to the lineage rule and the table's types, and counted per
object before the write; whatever goes wrong fails the batch in one line, nothing staged."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental.model import PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead, ReadBatch
from lakeinlet.incremental.read import checks, lineage
from lakeinlet.incremental.read.causes import root_cause
from lakeinlet.incremental.read.conflicts import table_types, widened
from lakeinlet.incremental.read.explicit_schema import parse_schema
from lakeinlet.incremental.read.key_values import wanted
from lakeinlet.incremental.settings import ReadSection
from lakeinlet.incremental.transform_settings import VIEW, Transform

KEPT = (*lineage.LINEAGE, "_ingest_batch")
"""The columns a transform must pass through as they are (removals and replacements match rows by
them; the ledger's repair and the quarantine name objects by them)."""
LINEAGE_TYPES = T.StructType([T.StructField(c, T.TimestampType() if c.endswith("time") else T.StringType())
                              for c in KEPT])
_VIEW = threading.Lock()
"""Routes share one session, in which `source` is one view: it is bound, read by the query's
analysis (which Spark makes eagerly) and dropped under this lock."""


class Refused(Exception):
    """What the transform did that the write cannot take (its message is the reason)."""


@dataclass
class TransformingReader:
    """Reads with `inner` (a SparkReader, whose probes `CheckedReader` uses through this), then
    shapes the rows with `step`."""

    inner: Any
    step: Transform

    def __getattr__(self, name: str) -> Any:  # the reader's attributes (`probes.Opener`)
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
             heads: Mapping[Ref, ObjectHead] | None = None, single_pass: bool = False) -> ReadBatch:
        """The inner read without the table's schema (the source's rows are not the table's: their
        types are not judged by it) nor the one pass (its check counts rows read, not written)."""
        batch = self.inner.read(objs, batch_id, None, heads, single_pass=False)
        if batch.data is None:
            return batch
        out: DataFrame | None = None
        try:
            out = conformed(shaped(self.step, batch.data), table_schema)
            out = out.persist(StorageLevel.MEMORY_AND_DISK)  # the count and the write see one result
            written = counted(out, objs)
        except Exception as exc:  # analysis, a UDF's or the hook's own error, a refusal: all fail the batch
            if out is not None:
                out.unpersist()
            batch.release()
            raise TerminalError(failure(self.step, objs, batch_id, exc)) from exc
        if not any(written.values()):
            out.unpersist()
            return replace(batch, data=None, schema=None, written=written)
        return replace(batch, data=out, schema=to_arrow_schema(out.schema), written=written,
                       cached=(*batch.cached, out))


def transforming(reader: Any, step: Transform | None) -> Any:
    """`reader` with the transform step around it (itself without one)."""
    return reader if step is None else TransformingReader(reader, step)


def shaped(step: Transform, df: DataFrame) -> DataFrame:
    """The transform's rows (analysed, not computed); lineage columns it dropped or retyped refused."""
    if step.sql is not None:
        spark = df.sparkSession
        with _VIEW:
            df.createOrReplaceTempView(VIEW)
            try:
                out = spark.sql(step.sql)
            finally:
                spark.catalog.dropTempView(VIEW)
    else:
        out = step.function()(df)
        if not isinstance(out, DataFrame):
            raise Refused(f"returned a {type(out).__name__}, not a Spark DataFrame")
    if why := lineage_problem(out.schema, df.schema):
        raise Refused(why)
    return out


def lineage_problem(found: T.StructType, given: T.StructType) -> str | None:
    """Why the transform's columns break the lineage rule (None: they keep it)."""
    names = {f.name: f.dataType for f in found.fields}
    if missing := [c for c in KEPT if c not in names]:
        many = len(missing) > 1
        return (f"it drops the lineage column{'s' if many else ''} {', '.join(missing)}: pass "
                f"{'them' if many else 'it'} through (SQL: `SELECT …, " + ", ".join(KEPT) + " FROM source`)")
    want = {f.name: f.dataType for f in given.fields}
    changed = [f"{c} is {names[c].simpleString()}, not {want[c].simpleString()}"
               for c in KEPT if c in want and names[c] != want[c]]
    return f"it changes lineage columns' types ({'; '.join(changed)}): pass them as they are" \
        if changed else None


def conformed(out: DataFrame, table: Any | None) -> DataFrame:
    """`out` with the table's type on columns that widen to it (int → bigint); a column whose
    type the table cannot take is refused, naming both."""
    if table is None:
        return out
    have = table_types(table)
    if bad := checks.conflicts({f.name: f.dataType for f in out.schema.fields}, have, "in the table"):
        raise Refused("its column " + "; column ".join(bad).replace(" in the object", " in its rows")
                      + ": cast it in the transform")
    return widened(out, have)


def counted(out: DataFrame, objs: Sequence[PlannedObject]) -> dict[Ref, int]:
    """Rows the transform made of each object (one Spark job, which fills `out`'s cache); rows
    naming an object this batch did not read are refused (the transform changed their lineage)."""
    found = {(r[0], r[1]): int(r[2]) for r in
             out.groupBy("_source_bucket", "_source_key").count().collect()}
    read = {(o.bucket, o.key) for o in objs}
    if strange := [ref for ref in found if ref not in read]:
        (b, k), n = strange[0], found[strange[0]]
        named = f"name s3://{b}/{k}, which this batch did not read" if b and k else \
            "have no _source_bucket or _source_key"
        raise Refused(f"{n} of its rows {named} (pass _source_bucket and _source_key as they are)")
    return {ref: found.get(ref, 0) for ref in read}


def failure(step: Transform, objs: Sequence[PlannedObject], batch_id: str, exc: BaseException) -> str:
    """The batch's one line: which transform, which batch, the first line of what went wrong."""
    versions = sorted({o.commit_version for o in objs}) or [0]
    span = f"v{versions[0]}" + (f"-{versions[-1]}" if versions[-1] != versions[0] else "")
    return (f"transform {step.label} failed on batch {span} ({batch_id}): {cause(exc)}; nothing "
            "was committed, the next run retries the batch")


def cause(exc: BaseException) -> str:
    """One line: a refusal's reason, a Python error's last line (a hook's, or a UDF's as the
    worker reported it), Spark's first line, else the innermost Java cause."""
    if isinstance(exc, Refused):
        return str(exc)
    text = str(exc)
    if "Traceback (most recent call last):" in text:
        tail = text.split("Traceback (most recent call last):", 1)[1].split("JVM stacktrace:")[0]
        last = [ln for ln in tail.splitlines() if ln.strip() and not ln[0].isspace()]
        if last:
            return last[-1][:500]
    if hasattr(exc, "java_exception") and type(exc).__name__ == "Py4JJavaError":
        return root_cause(exc)
    first = next((ln.strip().rstrip(";") for ln in text.splitlines() if ln.strip()), "")
    return (first if isinstance(exc, Exception) and type(exc).__module__.startswith("pyspark")
            else f"{type(exc).__name__}: {first}")[:500]


def check_at_start(session: Callable[[], SparkSession], config: Any, table: Any | None) -> None:
    """`start_problem` for a SQL transform (Spark starts), raised with the table's name.

    Raises:
        ConfigError: the problem found.
    """
    step, t = config.transform.step, config.tables
    if step is not None and step.sql is not None and (
            why := start_problem(session(), step, config.read, t.partition_by, table)):
        raise ConfigError([f"table {t.table}: {why}"])


def start_problem(spark: SparkSession, step: Transform, read: ReadSection,
                  partition_by: Sequence[str], table: Any | None) -> str | None:
    """At start-up, a SQL transform analysed over no rows of the columns known before a read (an
    explicit --schema's, `value` for text, else the lineage columns alone): why it cannot run, or
    drops a lineage column, or lacks a --partition-by column of a new table. A column it names
    that only the rows know leaves the verdict to each batch (None)."""
    if step.sql is None:
        return None
    source, known = _source_schema(read)
    try:
        out = shaped(step, spark.createDataFrame([], source))
    except Exception as exc:
        if not known and _unresolved(exc):
            return None
        return f"transform {step.label}: {cause(exc)}"
    lacking = [c for c in partition_by if table is None and c not in out.columns]
    return (f"transform {step.label}: its rows lack the --partition-by column {lacking[0]!r}: "
            "select it") if lacking else None


def _source_schema(read: ReadSection) -> tuple[T.StructType, bool]:
    """The columns a batch's rows hold before the transform, and whether those are all of them."""
    given = parse_schema(read.schema)
    if given is None and read.source_format == "text":
        given = T.StructType([T.StructField("value", T.StringType())])
    keys = wanted(read.partition_columns)  # None: whatever `name=value` folders keys hold
    fields = [f for f in (given.fields if given else []) if f.name not in KEPT]
    fields += [T.StructField(k, T.StringType()) for k in keys or () if k not in {f.name for f in fields}]
    return T.StructType([*fields, *LINEAGE_TYPES.fields]), given is not None and keys is not None


def _unresolved(exc: BaseException) -> bool:
    """Whether analysis failed on a column or field the source's rows may hold."""
    text = str(exc)
    return any(m in text for m in ("UNRESOLVED_COLUMN", "UNRESOLVED_FIELD", "FIELD_NOT_FOUND",
                                   "cannot be resolved", "cannot resolve"))
