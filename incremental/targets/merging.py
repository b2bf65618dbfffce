"""A batch's rows as changes by key (`--merge-key`), the same for every format: the newest change of
each key, flagged when it deletes the key, and the rule that keeps the newer of a change and a row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.model import LOADED, Outcome

DELETE = "_lakeinlet_delete"
"""The change deletes its key (`--delete-when`); never written to a table."""
SOURCE = "_lakeinlet_change"
"""1 on a change, 0 on a row the table holds (a tie goes to the change)."""
_SEQ, _RANK, _NULL = "_lakeinlet_seq", "_lakeinlet_rank", "_lakeinlet_no_key"
TIE_BREAK = ("_source_event_time", "_source_key")
"""After --order-by, a key's changes in one batch are ordered by their object's event time and key,
then by their place in the read (an object's later line wins)."""


@dataclass(frozen=True)
class Changes:
    """A batch's newest change per key (`rows`, with `DELETE`), and the rows left out because a key
    column is null, per object."""

    rows: Any
    unkeyed: dict[tuple[str, str], int]

    def outcomes(self, outcomes: Sequence[Outcome]) -> list[Outcome]:
        """`outcomes` with the rows each loaded object had without a key."""
        out = []
        for o in outcomes:
            n = self.unkeyed.get((o.obj.bucket, o.obj.key), 0) if o.status == LOADED else 0
            note = f"{n} rows with a null --merge-key column not loaded"
            out.append(replace(o, reason=f"{o.reason}; {note}" if o.reason else note) if n else o)
        return out


def changes(df: Any, merge: Merge) -> Changes:
    """The newest change of each key among `df`'s rows (greatest --order-by, nulls oldest; then
    `TIE_BREAK`), with `DELETE` set where --delete-when holds.

    Raises:
        TerminalError: a key or order column the rows lack, or a --delete-when Spark cannot run
            (the batch fails, nothing committed).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    wanted = [*merge.keys, *([merge.order_by] if merge.order_by else [])]
    if missing := [c for c in wanted if c not in df.columns]:
        raise TerminalError(f"{merge.label}: the batch's rows have no column {', '.join(missing)} "
                            f"(they have {', '.join(c for c in df.columns if not c.startswith('_'))})")
    try:
        flag = F.coalesce(F.expr(merge.delete_when).cast("boolean"), F.lit(False)) \
            if merge.delete_when else F.lit(False)
        df = df.withColumn(DELETE, flag)
        df.schema  # analyses the condition now, so its error names it  # noqa: B018
    except Exception as exc:  # a parse or analysis error of the user's condition fails the batch
        first = next(iter(str(exc).strip().splitlines()), type(exc).__name__)
        raise TerminalError(f"--delete-when {merge.delete_when!r}: Spark cannot run it: {first}") from exc
    null_key = F.lit(False)
    for k in merge.keys:
        null_key = null_key | F.col(k).isNull()
    order = [F.col(merge.order_by).desc_nulls_last()] if merge.order_by else []
    order += [F.col(c).desc_nulls_last() for c in TIE_BREAK if c in df.columns]
    # a row without a key is a group of its own (ranked first, counted below), not one group of them all
    w = Window.partitionBy(*merge.keys, F.when(F.col(_NULL), F.col(_SEQ))).orderBy(*order, F.col(_SEQ).desc())
    ranked = (df.withColumn(_NULL, null_key).withColumn(_SEQ, F.monotonically_increasing_id())
              .withColumn(_RANK, F.row_number().over(w)))
    # computed once, with one read of the batch's files: a MERGE reads its source more than once,
    # and a line's place in the read (the last tie-break) must not change between those reads
    kept = ranked.where(F.col(_RANK) == 1).drop(_RANK, _SEQ).localCheckpoint(eager=True)
    unkeyed = {(r[0], r[1]): int(r[2]) for r in kept.where(F.col(_NULL)).groupBy(
        "_source_bucket", "_source_key").count().collect()} if "_source_key" in df.columns else {}
    return Changes(kept.where(~F.col(_NULL)).drop(_NULL), unkeyed)


def newer_rows(table_rows: Any, change_rows: Any, merge: Merge) -> Any:
    """The rows a merge leaves of `table_rows` (rows the table holds) and `change_rows` (one
    change per key, with `DELETE`): per key the one with the greater --order-by (a change on a
    tie), dropped when it is a delete. Rows of keys no change carries (a null key too) are kept as
    they are, as MERGE INTO keeps them: only the changed keys' rows are ranked, so the rest is
    not shuffled."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = F.broadcast(change_rows.select(*merge.keys).distinct())
    kept = table_rows.join(keys, list(merge.keys), "left_anti")
    both = (table_rows.join(keys, list(merge.keys), "left_semi").withColumn(SOURCE, F.lit(0))
            .withColumn(DELETE, F.lit(False))
            .unionByName(change_rows.withColumn(SOURCE, F.lit(1)), allowMissingColumns=True))
    order = [F.col(merge.order_by).desc_nulls_last()] if merge.order_by else []
    w = Window.partitionBy(*merge.keys).orderBy(*order, F.col(SOURCE).desc())
    ranked = both.withColumn(_RANK, F.row_number().over(w))
    newest = ranked.where((F.col(_RANK) == 1) & ~F.col(DELETE)).drop(_RANK, SOURCE, DELETE)
    return kept.unionByName(newest, allowMissingColumns=True)


def merge_sql(target: str, source: str, merge: Merge, columns: Sequence[str]) -> str:
    """Spark SQL MERGE of the view `source` (one change per key, with `DELETE`) into `target`
    (`columns`: the target's, which the source has): the newest wins, a tie to the change."""
    on = " AND ".join(f"t.{quoted(k)} = s.{quoted(k)}" for k in merge.keys)
    order = quoted(merge.order_by or "")
    newer = f" AND (t.{order} IS NULL OR s.{order} >= t.{order})" if merge.order_by else ""
    sets = ", ".join(f"t.{quoted(c)} = s.{quoted(c)}" for c in columns)
    cols = ", ".join(quoted(c) for c in columns)
    vals = ", ".join(f"s.{quoted(c)}" for c in columns)
    return (f"MERGE INTO {target} t USING {source} s ON {on} "
            f"WHEN MATCHED AND s.{DELETE}{newer} THEN DELETE "
            f"WHEN MATCHED AND NOT s.{DELETE}{newer} THEN UPDATE SET {sets} "
            f"WHEN NOT MATCHED AND NOT s.{DELETE} THEN INSERT ({cols}) VALUES ({vals})")


def quoted(column: str) -> str:
    """A column name as Spark SQL quotes it."""
    return "`" + column.replace("`", "``") + "`"
