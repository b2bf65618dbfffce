"""One schema for a batch of Avro objects: Spark's Avro reader takes the schema of one file and
silently drops the columns only other files hold, so each object's schema is read (its header) and
the batch is read with their union; an object whose types conflict with it is set aside."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read import checks, probes
from lakeinlet.incremental.read.probes import Opener
from lakeinlet.incremental.read.verdicts import Failed

WHERE = "in most objects of the batch"


def union(typed: Sequence[dict[str, Any]]) -> T.StructType:
    """Every column of `typed` (objects' column → type, in event order), first seen first, each of
    the type most objects agree on (`checks.agreed_types`)."""
    agreed = checks.agreed_types(typed)
    return T.StructType([T.StructField(name, t, True) for name, t in agreed.items()])


def read(opener: Opener, objs: Sequence[PlannedObject], fail: bool) -> tuple[DataFrame | None, Failed]:
    """The batch read with the union of its objects' schemas (None: every object set aside), and
    the objects set aside because a column's type conflicts with it.

    Raises:
        TerminalError: with `fail` (--on-type-conflict fail), naming the first conflicting object.
    """
    typed = probes.typed_objects(opener, objs)
    found = [typed[(o.bucket, o.key)] for o in objs if (o.bucket, o.key) in typed]
    if len(found) < 2:
        return probes.reread(opener, objs), {}
    schema = union(found)
    failed = checks.type_conflicts(objs, dict(zip(schema.names, [f.dataType for f in schema.fields],
                                                  strict=True)), typed, opener.uri, fail, WHERE)
    left = [o for o in objs if (o.bucket, o.key) not in failed]
    paths = [opener.load_path(o) for o in left]
    return (opener.reader().schema(schema).load(paths) if paths else None), failed


def bulk(opener: Opener, objs: Sequence[PlannedObject], merge: bool) -> tuple[DataFrame | None, Failed]:
    """One read of `objs` in the source format (Avro without --schema: `read`), and what was set
    aside before it."""
    if opener.settings.source_format == "avro" and opener.schema is None:
        return read(opener, objs, opener.settings.on_type_conflict == "fail")
    return opener.reader(merge=merge).load([opener.load_path(o) for o in objs]), {}
