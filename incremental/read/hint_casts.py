"""`--schema-hints` on a batch's read: hinted columns cast to their hints (JSON/CSV/XML value by value,
each value that does not cast flagged for its object's verdict; Parquet/ORC/Avro where the cast is
safe), and a hinted column the files lack added, null."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from lakeinlet import column_names
from lakeinlet.incremental.read import checks, formats, rescue
from lakeinlet.incremental.read.schema_hints import FLAG, unhinted


def hint_for(hints: Mapping[str, tuple[str, Any]], name: str) -> Any | None:
    """The hinted type of column `name` (names match without case, as Spark's do), else None."""
    found = hints.get(name.lower())
    return found[1] if found is not None else None


def pinned(opener: Any, df: DataFrame) -> dict[str, Any]:
    """The batch's columns that a hint names (as `df` spells them) → the hinted type."""
    return {f.name: h for f in df.schema.fields if (h := hint_for(opener.hints, f.name)) is not None}


def viewed(opener: Any, types: Mapping[str, Any]) -> dict[str, Any]:
    """One object's own column types as the batch holds them once hinted: a hinted column takes its
    hint (typed files: where the cast loses nothing, `checks.casts_safely`; else it keeps its type,
    which the checks judge)."""
    inferred = opener.settings.source_format in formats.TEXT
    return {n: h if (h := hint_for(opener.hints, n)) is not None and (
        inferred or checks.casts_safely(t, h)) else t for n, t in types.items()}


def cast(opener: Any, df: DataFrame) -> DataFrame:
    """`df` with its hinted columns cast: safe casts always; others, in JSON/CSV/XML unless values
    are rescued (`rescue` casts those), value by value, a value that does not cast being null and
    its row flagged (`FLAG`). Typed files keep an unsafe column's type (the checks judge it)."""
    if not opener.hints or FLAG in df.columns:
        return df
    by_value = opener.settings.source_format in formats.TEXT and opener.settings.on_type_conflict != "rescue"
    cols: list[Column] = []
    flags: list[Column] = []
    for f in df.schema.fields:
        c, h = column_names.col(f.name), hint_for(opener.hints, f.name)
        if h is None or f.dataType == h or not (by_value or checks.casts_safely(f.dataType, h)):
            cols.append(c)
        elif checks.casts_safely(f.dataType, h):
            cols.append(c.cast(h).alias(f.name))
        else:
            done = rescue.try_cast(df, f.name, f.dataType, h)
            cols.append(done.alias(f.name))
            flags.append(F.when(c.isNotNull() & done.isNull(), F.lit(unhinted(f.name, h, f.dataType))))
    if not flags:
        return df.select(*cols)
    return df.select(*cols, F.filter(F.array(*flags), lambda x: x.isNotNull()).alias(FLAG))


def with_absent(opener: Any, df: DataFrame | None, table: Any | None) -> DataFrame | None:
    """`df` with a null column per hinted column it lacks (as Auto Loader adds them), typed as the
    table holds it, else as hinted; under --schema-mode strict only the columns the table holds."""
    if df is None or not opener.hints:
        return df
    held = {c.lower() for c in df.columns}
    current = {f.name.lower(): f.dataType for f in
               from_arrow_schema(table, prefer_timestamp_ntz=True).fields} if table is not None else {}
    strict = opener.settings.schema_mode == "strict" and table is not None
    added = [F.lit(None).cast(current.get(low, h)).alias(name) for low, (name, h) in opener.hints.items()
             if low not in held and not (strict and low not in current)]
    return df.select("*", *added) if added else df


def against_table(hints: Mapping[str, tuple[str, Any]], table: Any | None) -> list[str]:
    """The hints whose type the table's column cannot take (each batch's objects would be set aside
    for it): the table's type wins once it holds the column."""
    held = {f.name.lower(): f for f in from_arrow_schema(table, prefer_timestamp_ntz=True).fields} \
        if table is not None else {}
    return [f"--schema-hints {name} {h.simpleString().upper()}: the table holds {f.name} as "
            f"{f.dataType.simpleString()}, into which a {h.simpleString()} does not load; hint "
            f"{name} {f.dataType.simpleString().upper()} or drop the hint"
            for low, (name, h) in hints.items() if (f := held.get(low)) is not None
            and not checks.widens(h, f.dataType)]
