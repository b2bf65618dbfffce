"""Column names that differ only in case: Spark (and every target format) matches names without
case, so a batch whose objects spell a column two ways cannot be read as one; the objects that
spell it otherwise than the table (or the batch's first object) are set aside, the rest loads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lakeinlet.incremental.model import SCHEMA_CONFLICT, PlannedObject, Ref
from lakeinlet.incremental.read.checks import typed_objects

if TYPE_CHECKING:
    from lakeinlet.incremental.read.reader import SparkReader

Failed = dict[Ref, tuple[str, str]]


def is_case_conflict(exc: BaseException) -> bool:
    return "COLUMN_ALREADY_EXISTS" in str(exc)


def clashes(names: Sequence[str], spelled: dict[str, str]) -> list[str]:
    """How `names` clash with the spellings already taken (`spelled`: lower case → spelling)."""
    return [f"column `{n}` differs only in case from `{spelled[n.lower()]}`" for n in names
            if spelled.get(n.lower(), n) != n]


def split(reader: SparkReader, objs: Sequence[PlannedObject], failed: Failed,
          table: Any | None) -> list[PlannedObject]:
    """The objects whose column names agree in case with the table's (in a first batch, with the
    spelling of the earliest object, in event order); the others go to `failed`."""
    where = "the table's" if table is not None else "an earlier object's"
    spelled = {n.lower(): n for n in (table.names if table is not None else [])}
    ordered = sorted(objs, key=lambda o: (o.event_time, o.commit_version))
    typed = typed_objects(reader, ordered)
    for o in ordered:
        names = list(typed.get((o.bucket, o.key), {}))
        if found := clashes(names, spelled):
            failed[(o.bucket, o.key)] = (SCHEMA_CONFLICT, (
                f"{'; '.join(found)} ({where}): Spark and the table formats match column names "
                f"without case; rename it in {reader.uri(o)} and upload it again, or set --schema"))
        else:
            spelled |= {n.lower(): n for n in names if n.lower() not in spelled}
    return [o for o in objs if (o.bucket, o.key) not in failed]
