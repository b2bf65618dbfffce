"""Partition values in keys as columns of a batch's rows (`key_values` finds them): strings, or
the table's type when it holds the column with another one; objects whose value does not cast
are set aside."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from lakeinlet import column_names
from lakeinlet.incremental.model import SCHEMA_CONFLICT, PlannedObject
from lakeinlet.incremental.read.conflicts import table_types
from lakeinlet.incremental.read.key_values import found
from lakeinlet.incremental.read.verdicts import Failed
from lakeinlet.incremental.settings import ReadSection


def unfit(spark: SparkSession, objs: Sequence[PlannedObject], by_key: Mapping[str, Mapping[str, str | None]],
          types: Mapping[str, Any]) -> Failed:
    """The objects with a key value that does not cast to the type the table holds its column in
    (`schema_conflict`, naming key, column and value); one small Spark job, only when a column the
    keys give is held with a type other than string."""
    typed = {c.lower(): t for c, t in types.items() if not isinstance(t, T.StringType)}
    checks = [(o, c, v, typed[c.lower()]) for o in objs for c, v in by_key.get(o.key, {}).items()
              if v is not None and c.lower() in typed]
    if not checks:
        return {}
    # try_cast: under ANSI mode (Spark 4's default) a cast that fails raises instead of giving null
    row = spark.range(1).select(*(F.lit(v).alias(f"c{i}") for i, (_, _, v, _) in enumerate(checks))) \
        .selectExpr(*(f"try_cast(c{i} AS {t.simpleString()}) IS NULL" for i, (*_, t) in enumerate(checks))) \
        .first()
    out: Failed = {}
    for i, (o, c, v, t) in enumerate(checks):
        if row is not None and row[i] and (o.bucket, o.key) not in out:
            out[(o.bucket, o.key)] = (SCHEMA_CONFLICT, (
                f"partition value {c}={v!r} in key s3://{o.bucket}/{o.key} does not cast to "
                f"{t.simpleString()}, the type of column {c!r} (table or --schema): move the object "
                f"under a key with a {t.simpleString()} value, or set --partition-columns without {c}"))
    return out


def with_columns(df: DataFrame, by_key: Mapping[str, Mapping[str, str | None]],
                 types: Mapping[str, Any]) -> DataFrame:
    """`df` (with lineage) and a column per key value name, looked up by each row's key folder in
    one literal map (no join): a column the rows hold themselves keeps their values, the key's
    value fills only its nulls; typed as the rows' column, else the table's, else string."""
    folders: dict[str, dict[str, str | None]] = {}
    for key, vals in by_key.items():
        folders.setdefault(key[:key.rfind("/") + 1], {}).update(vals)
    spelled: dict[str, str] = {}  # one column per name in any case, spelled as first found
    for vals in folders.values():
        spelled.update({n.lower(): spelled.get(n.lower(), n) for n in vals})
    names = list(spelled.values())
    if not names:
        return df
    struct = "struct<" + ",".join(f"`{i}`:string" for i in range(len(names))) + ">"
    table = {f: {str(i): {k.lower(): v for k, v in vals.items()}.get(n.lower()) for i, n in enumerate(names)}
             for f, vals in folders.items()}
    lookup = F.from_json(F.lit(json.dumps(table)), f"map<string,{struct}>")[
        F.regexp_extract("_source_key", r"^(.*/)", 1)]
    held = {f.name.lower(): f for f in df.schema.fields}
    typed = {c.lower(): t for c, t in types.items()}
    added = {n: _column(lookup[str(i)], held.get(n.lower()), typed.get(n.lower())).alias(
        held[n.lower()].name if n.lower() in held else n) for i, n in enumerate(names)}
    return df.select(*(_kept(f, added, names) for f in df.schema.fields),
                     *(c for n, c in added.items() if n.lower() not in held))


def _column(value: Column, field: T.StructField | None, table_type: Any | None) -> Column:
    if field is not None:
        return F.coalesce(column_names.col(field.name), _try_cast(value, field.dataType))
    return value if table_type is None else _try_cast(value, table_type)


def _try_cast(value: Column, to: Any) -> Column:
    """A cast that gives null where the value does not cast, as Spark 3.5's default cast does;
    Spark 4's ANSI cast would fail the read (`Column.try_cast` is Spark 4's)."""
    try_cast = getattr(Column, "try_cast", None)  # on the class: a column's attribute is a field
    return try_cast(value, to) if try_cast is not None else value.cast(to)


def _kept(field: T.StructField, added: Mapping[str, Column], names: Sequence[str]) -> Column:
    """A column of the rows: itself, or filled from the key where a key value of its name exists."""
    same = next((n for n in names if n.lower() == field.name.lower()), None)
    return added[same] if same is not None else column_names.col(field.name)


@dataclass(frozen=True)
class Keys:
    """One batch's key columns: values per key, the types they are cast to, objects set aside."""

    by_key: Mapping[str, Mapping[str, str | None]]
    types: Mapping[str, Any]
    failed: Failed

    def add(self, df: DataFrame) -> DataFrame:
        return with_columns(df, self.by_key, self.types) if self.by_key else df


def plan(spark: SparkSession, objs: Sequence[PlannedObject], prefixes: Sequence[str],
         read: ReadSection, schema: T.StructType | None, table: Any | None) -> Keys:
    """The key columns of a batch (`found`, per --partition-columns) and the objects whose values
    do not cast (`unfit`) to the table's types (else an explicit --schema's)."""
    types = table_types(table) if table is not None else \
        {f.name: f.dataType for f in (schema.fields if schema else [])}
    by_key = found(objs, prefixes, read.partition_columns, types if table is not None else None,
                   read.schema_mode == "strict")
    return Keys(by_key, types, unfit(spark, objs, by_key, types))
