"""Per-object checks of one Spark read: which objects cannot be loaded whole, and why.

Each check runs on the error path or on a small per-object aggregate, never per row on the driver:
- type conflicts with the table (in its first batch, with the types most objects agree on)
  → `schema_conflict`;
- bytes but no rows → read alone, strictly, to keep the root cause → `corrupt` or `missing`
  (no error and no record: a valid empty object, e.g. a CSV of only its header);
- Parquet rows read short of the footer's row count (a corrupt row group) → `corrupt`;
- size or modification time read by Spark differ from the HEAD's, or more Parquet rows read than
  the footer read with the HEAD holds → overwritten after the HEAD: its newer version's event
  loads it (`filtered`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from lakeinlet import column_names
from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import CORRUPT, FILTERED, MISSING, SCHEMA_CONFLICT, PlannedObject, Ref
from lakeinlet.incremental.ports import Footer, ObjectHead
from lakeinlet.incremental.read import hints, sniff

if TYPE_CHECKING:
    from lakeinlet.incremental.read.reader import SparkReader

Failed = dict[Ref, tuple[str, str]]
WIDENING = {("int", "bigint"), ("float", "double"), ("int", "double"), ("bigint", "double"),
            ("date", "timestamp"), ("timestamp_ntz", "timestamp")}
HOW_TO_FIX = ("fix the object and upload it again (its new event loads it), or set --schema to cast "
              "and reset the checkpoint; --on-type-conflict fail stops the run instead")


@dataclass(frozen=True)
class Seen:
    """What the read saw of one object: good rows, malformed records, size and mtime read."""

    rows: int
    bad: int
    size: int | None
    mtime: datetime | None
    replaced: int = 0
    """Good rows with U+FFFD in a string column: bytes the reader's charset could not decode."""


def per_object(df: DataFrame, has_corrupt: bool, decoded: Sequence[str] = ()) -> dict[Ref, Seen]:
    """One aggregation (it also fills the cache): rows, malformed records, size and mtime, and
    rows holding U+FFFD in one of the `decoded` string columns (JSON/CSV: text Spark decoded)."""
    bad = F.col("_corrupt_record").isNotNull() if has_corrupt else F.lit(False)
    text = F.concat_ws("", *map(column_names.col, decoded)) if decoded else F.lit("")
    agg = df.groupBy("_source_bucket", "_source_key").agg(
        F.sum(F.when(bad, 0).otherwise(1)).alias("rows"), F.sum(F.when(bad, 1).otherwise(0)).alias("bad"),
        F.max("_lakeinlet_file_size").alias("size"), F.max("_lakeinlet_file_mtime").alias("mtime"),
        F.count_if(~bad & text.contains("\ufffd")).alias("replaced"))
    return {(r["_source_bucket"], r["_source_key"]): Seen(
        int(r["rows"]), int(r["bad"]), r["size"], r["mtime"], int(r["replaced"])) for r in agg.collect()}


def one_pass_metrics() -> list[Any]:
    """What a one-pass write observes (per-row counts only): every row, and rows whose file path
    found no lineage."""
    return [F.count(F.lit(1)).alias("rows"), F.count_if(F.col("_source_key").isNull()).alias("unmatched")]


def one_pass(metrics: Mapping[str, Any], objs: Sequence[PlannedObject],
             footers: Mapping[Ref, Footer]) -> str | None:
    """Why the one-pass write of `objs` must not be committed (None: commit it). Its files' sizes
    and mtimes matched their HEADs when the read was planned (`SparkReader._as_headed`); it holds
    when every row found its lineage and the rows written are the rows the footers promise: a
    read never yields more rows than a footer holds, so equal sums mean every object was read
    whole. Otherwise the batch is read again and checked object by object (`problems`), which
    names the status of each."""
    if metrics.get("unmatched"):
        return f"{metrics['unmatched']} rows without lineage"
    promised = sum(footers[(o.bucket, o.key)].rows for o in objs)
    if int(metrics.get("rows", -1)) != promised:
        return f"wrote {metrics.get('rows')} rows, the footers promise {promised}"
    return None


def problems(reader: SparkReader, objs: Sequence[PlannedObject], seen: dict[Ref, Seen],
             heads: Mapping[Ref, ObjectHead], footers: Mapping[Ref, Footer]) -> Failed:
    """Objects whose rows must not be committed, with status and reason."""
    failed: Failed = {}
    for o in objs:
        ref, s = (o.bucket, o.key), seen.get((o.bucket, o.key))
        if s is not None and (why := changed_since_head(s, heads.get(ref))):
            failed[ref] = (FILTERED, why)
        elif (s is None or not s.rows) and o.size and \
                (status := no_rows(reader, o, s, getattr(heads.get(ref), "first", None))):
            failed[ref] = status
    if reader.settings.source_format == "parquet":
        failed |= beyond_footer([o for o in objs if (o.bucket, o.key) not in failed], seen, footers)
        failed |= short_of_footer(reader, [o for o in objs if (o.bucket, o.key) not in failed], seen,
                                  footers)
    return failed


def beyond_footer(objs: Sequence[PlannedObject], seen: Mapping[Ref, Seen],
                  footers: Mapping[Ref, Footer]) -> Failed:
    """Parquet objects that yielded more rows than the footer read with their HEAD holds: a read
    never yields more rows than its own footer, so Spark read another version (overwritten after
    the HEAD, when the plan's sizes and mtimes are the HEAD's own)."""
    out: Failed = {}
    for o in objs:
        ref = (o.bucket, o.key)
        if (s := seen.get(ref)) is not None and (f := footers.get(ref)) is not None and s.rows > f.rows:
            out[ref] = (FILTERED, f"object overwritten during the load (read {s.rows} rows, the footer "
                                  f"read with its HEAD holds {f.rows}); its newer version's event loads it")
    return out


def changed_since_head(s: Seen, head: ObjectHead | None) -> str | None:
    """Why the bytes Spark read are not the version the HEAD saw (None: same version)."""
    if head is None:
        return None
    if s.size is not None and s.size != head.size:
        return (f"object overwritten during the load (HEAD {head.size} bytes, read {s.size}); "
                "its newer version's event loads it")
    if s.mtime is not None and head.last_modified is not None and \
            (s.mtime - head.last_modified.replace(tzinfo=s.mtime.tzinfo)).total_seconds() >= 1:
        return (f"object overwritten during the load (HEAD {head.last_modified.isoformat()}, read "
                f"{s.mtime.isoformat()}); its newer version's event loads it")
    return None


def no_rows(reader: SparkReader, o: PlannedObject, s: Seen | None,
            first: bytes | None = None) -> tuple[str, str] | None:
    """An object with bytes but no rows: read it alone, strictly, every column parsed, to name
    what is wrong, with what its `first` bytes are when they tell (None: a valid object that
    holds no records, e.g. a CSV of only its header, or blank lines)."""
    found = sniff.what_it_is(first, o.key, reader.multiline) if first else None
    if s is not None and s.bad and found:
        return (CORRUPT, f"no parseable record ({s.bad} malformed): {found}")
    rows = parsed_alone(reader, o)  # the parser's own words for what it refused
    if s is not None and s.bad:
        why = f": {root_cause(rows)}" if isinstance(rows, BaseException) else ""
        return (CORRUPT, f"no parseable record ({s.bad} malformed){why}")
    if isinstance(rows, BaseException):
        text = root_cause(rows)
        missing = "FileNotFound" in str(rows) or "does not exist" in text.lower()
        return (MISSING, text) if missing else (CORRUPT, f"{found}; Spark: {text}" if found else text)
    if rows == 0:
        return None
    return (CORRUPT, found or f"{rows} rows read alone, none in the batch's read: please report this")


def parsed_alone(reader: SparkReader, o: PlannedObject) -> int | BaseException:
    """The rows of one object read alone, strictly (FAILFAST), every column parsed (a count
    alone parses nothing), or the error that stopped the read."""
    try:
        df = reader.reader(strict=True).load(reader.load_path(o))
        parsed = F.to_json(F.struct(*map(column_names.col, df.columns))) if df.columns else F.lit("")
        return int(df.agg(F.count(parsed), F.sum(F.length(parsed))).first()[0])
    except Exception as exc:  # Spark raises Py4J/Analysis errors: classify by their root cause
        return exc


def root_cause(exc: BaseException) -> str:
    """The first line of the innermost Java cause's message (e.g. "... is not a Parquet file.
    Expected magic number ..."), not py4j's "An error occurred while calling o116.load.", with
    what to do about it when `hints` knows."""
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    if java is not None:
        message = next((ln.strip() for ln in str(java.getMessage()).splitlines() if ln.strip()), "")
        return hints.advice(f"{java.getClass().getSimpleName()}: {message}"[:500])
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    caused = [ln for ln in lines if ln.startswith("Caused by:")]
    return hints.advice((caused[-1][len("Caused by:"):].strip() if caused
                         else (lines[0] if lines else repr(exc)))[:500])


def short_of_footer(reader: SparkReader, objs: Sequence[PlannedObject], seen: dict[Ref, Seen],
                    footers: Mapping[Ref, Footer]) -> Failed:
    """Parquet objects that yielded fewer rows than their footers promise (a corrupt row group
    that `ignoreCorruptFiles` stopped at). The footers were read before the read (ranged GETs,
    If-Match the HEAD's etag); Spark counts the rows of those that were not (footers only)."""
    objs = [o for o in objs if (o.bucket, o.key) in seen]
    promised = {(o.bucket, o.key): f.rows for o in objs if (f := footers.get((o.bucket, o.key)))}
    promised |= spark_footer_rows(reader, [o for o in objs if (o.bucket, o.key) not in promised])
    return {ref: (CORRUPT, f"read {seen[ref].rows} rows but the Parquet footer says {n}: a row "
                           "group is corrupt") for ref, n in promised.items() if seen[ref].rows < n}


def spark_footer_rows(reader: SparkReader, objs: Sequence[PlannedObject]) -> dict[Ref, int]:
    """Footer row counts through Spark: a count without columns reads footers only."""
    if not objs:
        return {}
    counted = reader.reader().load([reader.load_path(o) for o in objs]) \
        .select(F.col("_metadata.file_path").alias("p")).groupBy("p").count().collect()
    by_path = dict(zip(lakejvm.path_uris(reader.spark, map(reader.uri, objs)), objs, strict=True))
    return {(o.bucket, o.key): int(r["count"]) for r in counted if (o := by_path.get(r["p"]))}


def is_merge_conflict(exc: BaseException) -> bool:
    text = str(exc)
    return "CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE" in text or "Failed to merge" in text


def object_types(reader: SparkReader, o: PlannedObject) -> dict[str, Any] | None:
    """Column → Spark type of one object alone (None when it cannot be read)."""
    try:
        return {f.name: f.dataType for f in reader.reader().load(reader.load_path(o)).schema.fields}
    except Exception:  # unreadable objects are named by the checks after the read
        return None


def widens(found: Any, want: Any) -> bool:
    """Whether a column of type `found` loads into one of type `want` (equal, or a safe cast)."""
    return bool(found == want or (found.simpleString(), want.simpleString()) in WIDENING)


def conflicts(found: Mapping[str, Any], want: Mapping[str, Any], where: str = "in the table") -> list[str]:
    """Columns whose type in `found` cannot be cast safely to the type in `want`."""
    out = []
    for name, t in found.items():
        w = want.get(name)
        if w is not None and not widens(t, w):
            out.append(f"{name!r} is {w.simpleString()} {where} but {t.simpleString()} in the object")
    return out


def agreed_types(typed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per column, the type most objects agree on: an object agrees with its own type and with
    every safe widening of it; a tie goes to the type that appears first (`typed` in event order)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(c for t in typed for c in t):
        seen = [t[name] for t in typed if name in t]
        support = {w: sum(widens(t, w) for t in seen) for w in dict.fromkeys(seen)}
        out[name] = max(support, key=support.__getitem__)  # the first of equals: the earliest
    return out


FIRST_BATCH = "in most objects of the batch that creates the table"


def typed_objects(reader: SparkReader, objs: Sequence[PlannedObject]) -> dict[Ref, dict[str, Any]]:
    """Each object's own column types (read alone, a few at a time), unreadable ones left out."""
    with ThreadPoolExecutor(4) as pool:
        found = pool.map(lambda o: object_types(reader, o), objs)
        return {(o.bucket, o.key): t for o, t in zip(objs, found, strict=True) if t is not None}


def quarantine(reader: SparkReader, objs: Sequence[PlannedObject], want: Mapping[str, Any],
               failed: Failed, typed: Mapping[Ref, Mapping[str, Any]] | None = None,
               where: str = "in the table") -> list[PlannedObject]:
    """Set aside the objects whose types conflict with `want`; returns the others.

    Raises:
        TerminalError: with --on-type-conflict fail, naming the first conflicting object.
    """
    keep = []
    for o in objs:
        types = typed.get((o.bucket, o.key)) if typed is not None else object_types(reader, o)
        found = conflicts(types, want, where) if types else []
        if not found:
            keep.append(o)
            continue
        why = f"type conflict: column {'; column '.join(found)} ({reader.uri(o)})"
        if reader.settings.on_type_conflict == "fail":
            raise TerminalError(f"{why}. The checkpoint did not move. To go on: {HOW_TO_FIX}, or "
                                "--on-type-conflict quarantine to load the rest")
        failed[(o.bucket, o.key)] = (SCHEMA_CONFLICT, f"{why}. To load it: {HOW_TO_FIX}")
    return keep


def split_conflicting(reader: SparkReader, objs: Sequence[PlannedObject], failed: Failed,
                      table: Any | None) -> tuple[DataFrame | None, list[PlannedObject]]:
    """Parquet files of one batch whose types cannot be merged: the table's types win (in a
    first batch, the types most objects agree on: `agreed_types`), the others are quarantined,
    the rest read again."""
    if table is not None:
        want = {f.name: f.dataType for f in from_arrow_schema(table, prefer_timestamp_ntz=True).fields}
        keep = quarantine(reader, objs, want, failed)
    else:
        keep = _first_batch_agreement(reader, objs, failed)
    if not keep or len(keep) == len(objs):
        return None, keep
    return reader.reader().load([reader.load_path(o) for o in keep]), keep


def _first_batch_agreement(reader: SparkReader, objs: Sequence[PlannedObject],
                           failed: Failed) -> list[PlannedObject]:
    """The objects of a table's first batch that agree with the types most of them share."""
    ordered = sorted(objs, key=lambda o: (o.event_time, o.commit_version))
    typed = typed_objects(reader, ordered)
    want = agreed_types([typed[r] for o in ordered if (r := (o.bucket, o.key)) in typed])
    return quarantine(reader, objs, want, failed, typed, FIRST_BATCH)


def may_hide_conflicts(reader: SparkReader, df: DataFrame, objs: Sequence[PlannedObject]) -> bool:
    """Whether an inferred text read of several objects may have merged conflicting types into a
    string column (JSON merges a number and a string, or a struct and a number, into a string)."""
    infers = reader.settings.source_format == "json" or (
        reader.settings.source_format == "csv"
        and reader.settings.options.get("inferSchema", "").lower() == "true")
    return bool(reader.schema is None and infers and len(objs) > 1 and any(
        f.dataType.simpleString() == "string" for f in df.schema.fields if f.name != "_corrupt_record"))


def reconcile(reader: SparkReader, df: DataFrame, objs: Sequence[PlannedObject], table: Any | None,
              failed: Failed) -> tuple[DataFrame | None, list[PlannedObject]]:
    """Cast safe widenings to the table's types; objects whose types conflict are quarantined
    (the rest is read again without them); new columns fail in strict schema mode."""
    if table is None:
        if not may_hide_conflicts(reader, df, objs):
            return df, list(objs)
        keep = _first_batch_agreement(reader, objs, failed)
        if len(keep) == len(objs) or not keep:
            return (df if keep else None), keep
        return reader.reader().load([reader.load_path(o) for o in keep]), keep
    current = {f.name: f.dataType for f in from_arrow_schema(table, prefer_timestamp_ntz=True).fields}
    if found := conflicts({f.name: f.dataType for f in df.schema.fields}, current):
        keep = quarantine(reader, objs, current, failed)
        if not keep:
            return None, keep
        if len(keep) == len(objs):  # only the batch's merged schema conflicts: no object to blame
            raise TerminalError(f"type conflict: column {'; column '.join(found)} (the batch's "
                                f"merged schema); set --schema to read these objects")
        return reconcile(reader, reader.reader().load([reader.load_path(o) for o in keep]), keep,
                         table, failed)
    for f in df.schema.fields:
        want = current.get(f.name)
        if want is not None and want != f.dataType:
            df = df.withColumn(f.name, column_names.col(f.name).cast(want))
    if reader.settings.schema_mode == "strict" and (
            new := set(df.columns) - set(current) - {"_corrupt_record"}):
        raise TerminalError(f"--schema-mode strict: batch brings new columns {sorted(new)}")
    return df, list(objs)
