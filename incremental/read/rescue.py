"""Rescued fields (`--on-type-conflict rescue`): a value whose type the table cannot hold, or a
column a strict schema does not know, leaves its column and goes, as text in a JSON object keyed
by column name, into `_rescued_data`; the row is loaded, never the object set aside."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lakeinlet import column_names
from lakeinlet.incremental.read import checks

RESCUED = "_rescued_data"
RESCUED_COUNT = "_lakeinlet_rescued"
"""Fields rescued in the row (counted per object for the ledger, dropped before the write)."""
CORRUPT = "_corrupt_record"
NESTED = (T.StructType, T.ArrayType, T.MapType)


def rescue(df: DataFrame, want: Mapping[str, Any], unknown: Collection[str] = ()) -> DataFrame:
    """`df` with each column whose type does not load into `want`'s cast to it where the value
    casts (null where it does not, the value going to `_rescued_data`), the `unknown` columns
    moved whole into `_rescued_data`, and the count of fields rescued per row."""
    entries: list[Column] = []
    cols: list[Column] = []
    for f in df.schema.fields:
        c, w = column_names.col(f.name), want.get(f.name)
        if f.name == CORRUPT:
            continue
        if f.name in unknown or f.name in (RESCUED, RESCUED_COUNT):  # the source's own: kept too
            entries += [F.lit(f.name), _text(c, f.dataType)]
        elif w is not None and not checks.widens(f.dataType, w):
            cast = try_cast(df, f.name, f.dataType, w)
            entries += [F.lit(f.name), F.when(c.isNotNull() & cast.isNull(), _text(c, f.dataType))]
            cols.append(cast.alias(f.name))
        else:
            cols.append(c)
    found = F.map_filter(F.create_map(*entries), lambda _k, v: v.isNotNull()) if entries else None
    count = F.size(found) if found is not None else F.lit(0)
    text = F.when(count > 0, F.to_json(found)) if found is not None else F.lit(None)
    extra = [column_names.col(CORRUPT)] if CORRUPT in df.columns else []
    return df.select(*cols, *extra, text.cast("string").alias(RESCUED), count.alias(RESCUED_COUNT))


def try_cast(df: DataFrame, name: str, found: Any, want: Any) -> Column:
    """The column cast to `want` where its value casts, else null (no cast at all: always null);
    text into a nested type, and a struct into a map, as JSON (a struct into another struct is
    cast, never through JSON, which would drop the fields the other lacks)."""
    c = column_names.col(name)
    if (isinstance(want, NESTED) and isinstance(found, T.StringType)) or \
            (isinstance(want, T.MapType) and isinstance(found, T.StructType)):
        text = c if isinstance(found, T.StringType) else F.to_json(c)
        parsed = F.from_json(text, want.simpleString())
        if isinstance(want, T.StructType):  # Spark 3.5 parses text that is no object as a struct of nulls
            return F.when(F.from_json(text, "map<string,string>").isNotNull(), parsed)
        return parsed
    cast = F.expr(f"try_cast({column_names.quoted(name)} AS {want.simpleString()})")
    try:
        df.select(cast).schema  # noqa: B018 - the analysis is the check: Spark may not cast at all
    except AnalysisException:
        return F.lit(None).cast(want)
    return cast


def _text(c: Column, t: Any) -> Column:
    return F.to_json(c) if isinstance(t, T.StructType | T.ArrayType | T.MapType) else c.cast("string")
