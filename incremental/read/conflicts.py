"""Objects of one batch whose column types (or the case of their column names) the batch cannot
hold: each object's own types are read (`probes`), `checks` and `case_names` judge them, and the
rest is read again without the objects set aside."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from lakeinlet import column_names
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import PlannedObject, Ref
from lakeinlet.incremental.read import case_names, checks, formats, hint_casts, probes, rescue
from lakeinlet.incremental.read.checks import HINTED
from lakeinlet.incremental.read.probes import Opener
from lakeinlet.incremental.read.schema_hints import FLAG
from lakeinlet.incremental.read.verdicts import Failed, Loaded


def table_types(table: Any) -> dict[str, Any]:
    """Column → Spark type of the table's (pyarrow) schema."""
    return {f.name: f.dataType for f in from_arrow_schema(table, prefer_timestamp_ntz=True).fields}


def quarantine(opener: Opener, objs: Sequence[PlannedObject], want: Mapping[str, Any],
               typed: Mapping[Ref, Mapping[str, Any] | None] | None = None,
               where: str = "in the table") -> tuple[list[PlannedObject], Failed]:
    """The objects whose types agree with `want` (read alone unless `typed`), and the others."""
    if typed is None:
        typed = {(o.bucket, o.key): probes.object_types(opener, o) for o in objs}
    failed = checks.type_conflicts(objs, want, typed, opener.uri,
                                   opener.settings.on_type_conflict == "fail", where)
    return [o for o in objs if (o.bucket, o.key) not in failed], failed


def first_batch_agreement(opener: Opener, objs: Sequence[PlannedObject]
                          ) -> tuple[list[PlannedObject], Failed]:
    """The objects of a table's first batch that agree with the types most of them share."""
    ordered = sorted(objs, key=lambda o: (o.event_time, o.commit_version))
    typed = probes.typed_objects(opener, ordered)
    want = checks.agreed_types([typed[r] for o in ordered if (r := (o.bucket, o.key)) in typed])
    return quarantine(opener, objs, want, typed, checks.FIRST_BATCH)


def split_conflicting(opener: Opener, objs: Sequence[PlannedObject], table: Any | None) -> Loaded:
    """Parquet files of one batch whose types cannot be merged: the table's types win (in a
    first batch, the types most objects agree on: `checks.agreed_types`), the others are
    quarantined, the rest read again (objects a hint sets aside first: `by_hints`)."""
    objs, aside = by_hints(opener, objs)
    keep, failed = quarantine(opener, objs, table_types(table)) if table is not None \
        else first_batch_agreement(opener, objs)
    failed |= aside
    if not keep or len(keep) == len(objs):
        return Loaded(None, keep, failed)
    return Loaded(probes.reread(opener, keep), keep, failed)


def by_hints(opener: Opener, objs: Sequence[PlannedObject]) -> tuple[list[PlannedObject], Failed]:
    """The typed files (Parquet, ORC, Avro) whose hinted columns' types cast to the hints without
    loss (read alone), and the others; JSON/CSV/XML, and rescued values, are cast value by value."""
    if not opener.hints or opener.settings.source_format in formats.TEXT or rescuing(opener):
        return list(objs), {}
    typed = {(o.bucket, o.key): probes.object_types(opener, o) for o in objs}
    want = {n: h for t in typed.values() for n in (t or {}) if (h := hint_casts.hint_for(opener.hints, n))}
    return quarantine(opener, objs, want, typed, HINTED)


def case_split(opener: Opener, objs: Sequence[PlannedObject], table: Any | None
               ) -> tuple[list[PlannedObject], Failed]:
    """The objects whose column names agree in case with the table's (`case_names.split`), and the others."""
    ordered = sorted(objs, key=lambda o: (o.event_time, o.commit_version))
    failed = case_names.split(ordered, probes.typed_objects(opener, ordered), table, opener.uri)
    return [o for o in objs if (o.bucket, o.key) not in failed], failed


def hinted(opener: Opener, df: DataFrame, objs: Sequence[PlannedObject], table: Any | None) -> Loaded:
    """`reconcile` of the read cast to its --schema-hints (`hint_casts.cast`), typed files whose hinted
    column holds a type that does not cast safely set aside first (unless rescued); then the
    hinted columns the batch lacks added (`hint_casts.with_absent`)."""
    df = hint_casts.cast(opener, df)
    pins = hint_casts.pinned(opener, df)
    unsafe = checks.conflicts({f.name: f.dataType for f in df.schema.fields if f.name in pins}, pins, HINTED)
    if unsafe:
        keep, failed = by_hints(opener, objs)
        if not keep or len(keep) < len(objs):
            again = hinted(opener, probes.reread(opener, keep), keep, table) if keep else Loaded(None, keep)
            return replace(again, failed=failed | again.failed)
    done = reconcile(opener, df, objs, table)
    return replace(done, df=hint_casts.with_absent(opener, done.df, table))


def reconcile(opener: Opener, df: DataFrame, objs: Sequence[PlannedObject], table: Any | None) -> Loaded:
    """Cast safe widenings to the table's types; objects whose types conflict are quarantined
    (the rest is read again without them), or their values rescued (`rescue`); new columns fail
    in strict schema mode (or are rescued)."""
    if table is None:
        return _first_batch(opener, df, objs)
    current = table_types(table)
    strict = opener.settings.schema_mode == "strict"
    if rescuing(opener):
        want = {**current, **hint_casts.pinned(opener, df)}  # a hint the table refuses stops the start
        df = rescue.rescue(df, want, _new(df, current) if strict else ())
    elif found := checks.conflicts({f.name: f.dataType for f in df.schema.fields}, current):
        keep, failed = quarantine(opener, objs, current)
        if not keep:
            return Loaded(None, keep, failed)
        if len(keep) == len(objs):  # only the batch's merged schema conflicts: no object to blame
            raise TerminalError(f"type conflict: column {'; column '.join(found)} (the batch's "
                                f"merged schema); set --schema to read these objects")
        again = reconcile(opener, probes.reread(opener, keep), keep, table)
        return replace(again, failed=failed | again.failed)
    df = widened(df, current)
    if strict and (new := _new(df, current)):
        raise TerminalError(f"--schema-mode strict: batch brings new columns {sorted(new)}")
    return Loaded(df, list(objs))


def widened(df: DataFrame, types: Mapping[str, Any]) -> DataFrame:
    """`df` with each column `types` holds cast to its type there (the safe widenings its checks allow)."""
    for f in df.schema.fields:
        want = types.get(f.name)
        if want is not None and want != f.dataType:
            df = df.withColumn(f.name, column_names.col(f.name).cast(want))
    return df


def rescuing(opener: Opener) -> bool:
    """Whether values the table cannot hold are rescued (`--on-type-conflict rescue`)."""
    return opener.settings.on_type_conflict == "rescue"


def _new(df: DataFrame, current: Mapping[str, Any]) -> set[str]:
    """The batch's columns the table does not have (its own bookkeeping columns aside)."""
    return set(df.columns) - set(current) - {"_corrupt_record", rescue.RESCUED, rescue.RESCUED_COUNT, FLAG}


def _first_batch(opener: Opener, df: DataFrame, objs: Sequence[PlannedObject]) -> Loaded:
    """A first batch's inferred text read: the objects that disagree with most are set aside
    (rescued: their values the types most agree on cannot hold go to `_rescued_data`)."""
    pins = hint_casts.pinned(opener, df)
    if not checks.may_hide_conflicts(opener.settings, opener.schema, df.schema, len(objs), {*pins, FLAG}):
        return Loaded(rescue.rescue(df, pins) if rescuing(opener) else df, list(objs))
    if rescuing(opener):
        typed = probes.typed_objects(opener, sorted(objs, key=lambda o: (o.event_time, o.commit_version)))
        return Loaded(rescue.rescue(df, {**checks.agreed_types(list(typed.values())), **pins}), list(objs))
    keep, failed = first_batch_agreement(opener, objs)
    if len(keep) == len(objs) or not keep:
        return Loaded(df if keep else None, keep, failed)
    return Loaded(probes.reread(opener, keep), keep, failed)
