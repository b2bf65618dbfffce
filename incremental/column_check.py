"""Adapter: the batch's column names and partition columns judged before the write, around the
Spark reader. An object with a name its format cannot store is set aside alone (or renamed, with
`--column-names rename`); a partition column the rows lack stops the run in one line."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from lakeinlet.errors import TerminalError
from lakeinlet.incremental import column_names as cn
from lakeinlet.incremental.model import SCHEMA_CONFLICT, PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead, ReadBatch
from lakeinlet.incremental.read import probes


@dataclass
class CheckedReader:
    """Reads with `inner` (a SparkReader), then holds the rows to the target's column rules."""

    inner: Any
    fmt: str
    rename: bool = False
    partition_by: tuple[str, ...] = ()

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
             heads: Mapping[Ref, ObjectHead] | None = None, single_pass: bool = False) -> ReadBatch:
        batch = self.inner.read(objs, batch_id, table_schema, heads, single_pass=single_pass)
        if batch.data is None:
            return batch
        found, table = spark_tree(batch.data.schema), arrow_tree(table_schema)
        new, clashes = cn.renames(found, table) if self.rename else ({}, {})
        if clashes or (not self.rename and cn.unusable(found, self.fmt, table)):
            aside = self._refused(objs, table)
            if aside:
                batch.release()
                keep = [o for o in objs if (o.bucket, o.key) not in aside]
                again = self.read(keep, batch_id, table_schema, heads) if keep else None
                return dataclasses.replace(again, failed={**again.failed, **aside}) if again is not None \
                    else ReadBatch(None, None, {}, {}, aside)
            if not self.rename:  # only the merged schema holds the name: no object to blame
                raise TerminalError(cn.reason(cn.unusable(found, self.fmt, table)[0], self.fmt)
                                    + " (the batch's merged schema)")
        if new:  # a renamed column that another object holds by its new name is one column
            data = renamed(batch.data, new)
            batch = dataclasses.replace(batch, data=data, schema=to_arrow_schema(data.schema))
        if table_schema is None and (why := cn.missing_partitions(
                self.partition_by, batch.data.columns, "in the rows of the table's first batch")):
            batch.release()
            raise TerminalError(f"{why}; the table was not created and the checkpoint did not move")
        return batch

    def _refused(self, objs: Sequence[PlannedObject], table: cn.Tree | None) -> dict[Ref, tuple[str, str]]:
        """The objects that, read alone, hold a name the format cannot store (with `rename`: two
        names that become one), each with the first such name's reason."""
        aside: dict[Ref, tuple[str, str]] = {}
        for ref, types in probes.typed_objects(self.inner, objs).items():
            tree = spark_tree(T.StructType([T.StructField(n, t) for n, t in types.items()]))
            clashes = cn.renames(tree, table)[1] if self.rename else {}
            whys = [cn.clash_reason(p, c) for p, c in clashes.items()] if self.rename else \
                [cn.reason(p, self.fmt) for p in cn.unusable(tree, self.fmt, table)]
            why = whys[0] if whys else None
            if why:
                aside[ref] = (SCHEMA_CONFLICT, f"{why} (s3://{ref[0]}/{ref[1]})")
        return aside


def spark_tree(t: Any) -> cn.Tree:
    """Column names (with struct fields, through arrays and maps) of a Spark type."""
    if isinstance(t, T.StructType):
        return {f.name: spark_tree(f.dataType) for f in t.fields}
    if isinstance(t, T.ArrayType):
        return spark_tree(t.elementType)
    if isinstance(t, T.MapType):
        return spark_tree(t.valueType)
    return {}


def arrow_tree(schema: Any | None) -> cn.Tree | None:
    if schema is None:
        return None
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark_tree(from_arrow_schema(schema))


def renamed(df: DataFrame, new: Mapping[str, str]) -> DataFrame:
    """`df` with the names at the dotted paths of `new` renamed (a struct's fields by a cast,
    which Spark makes by position); a column renamed to a name another column holds (from other
    objects: no object holds both) is merged into it, when both have one type.

    Raises:
        TerminalError: the two columns' types differ.
    """
    cols: dict[str, tuple[Any, Any]] = {}
    for f in df.schema.fields:
        target = _renamed_type(f.dataType, new, f.name)
        col, name = F.col(f"`{f.name}`"), new.get(f.name, f.name)
        col = col.cast(target) if target != f.dataType else col
        other = next((k for k in cols if k.lower() == name.lower()), None)
        if other is None:
            cols[name] = (col, target)
        elif cols[other][1] != target:
            raise TerminalError(f"column {f.name!r} renamed to {name!r} is {target.simpleString()} but "
                                f"{other!r} is {cols[other][1].simpleString()} in this batch: rename "
                                "one in the source, or load them apart")
        else:
            cols[other] = (F.coalesce(cols[other][0], col), target)
    return df.select(*(c.alias(n) for n, (c, _) in cols.items()))


def _renamed_type(t: Any, new: Mapping[str, str], path: str) -> Any:
    if isinstance(t, T.StructType):
        return T.StructType([T.StructField(new.get(f"{path}.{f.name}", f.name),
                                           _renamed_type(f.dataType, new, f"{path}.{f.name}"), f.nullable)
                             for f in t.fields])
    if isinstance(t, T.ArrayType):
        return T.ArrayType(_renamed_type(t.elementType, new, path), t.containsNull)
    if isinstance(t, T.MapType):
        return T.MapType(t.keyType, _renamed_type(t.valueType, new, path), t.valueContainsNull)
    return t
