"""Column names that differ only in case: Spark (and every target format) matches names without
case, so a batch whose objects spell a column two ways cannot be read as one; the objects that
spell it otherwise than the table (or the batch's first object) are set aside, the rest loads."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lakeinlet.incremental.model import SCHEMA_CONFLICT, PlannedObject, Ref
from lakeinlet.incremental.read.verdicts import Failed


def is_case_conflict(exc: BaseException) -> bool:
    return "COLUMN_ALREADY_EXISTS" in str(exc)


def clashes(names: Sequence[str], spelled: dict[str, str]) -> list[str]:
    """How `names` clash with the spellings already taken (`spelled`: lower case → spelling)."""
    return [f"column `{n}` differs only in case from `{spelled[n.lower()]}`" for n in names
            if spelled.get(n.lower(), n) != n]


def split(ordered: Sequence[PlannedObject], typed: Mapping[Ref, Mapping[str, Any]], table: Any | None,
          uri: Callable[[PlannedObject], str]) -> Failed:
    """The objects (`ordered` by event) whose column names (`typed`) clash in case with the
    table's (in a first batch, with the spelling of the earliest object), as `schema_conflict`."""
    where = "the table's" if table is not None else "an earlier object's"
    spelled = {n.lower(): n for n in (table.names if table is not None else [])}
    failed: Failed = {}
    for o in ordered:
        names = list(typed.get((o.bucket, o.key), {}))
        if found := clashes(names, spelled):
            failed[(o.bucket, o.key)] = (SCHEMA_CONFLICT, (
                f"{'; '.join(found)} ({where}): Spark and the table formats match column names "
                f"without case; rename it in {uri(o)} and upload it again, or set --schema"))
        else:
            spelled |= {n.lower(): n for n in names if n.lower() not in spelled}
    return failed
