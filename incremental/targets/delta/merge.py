"""A Delta MERGE by key, copy on write: the files holding a batch's keys (and, with --on-overwrite
replace, earlier rows of its objects) are rewritten with the newer of each key's row and change;
the target commits their RemoveActions, the new files and the checkpoint in one transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.transaction import AddAction, RemoveAction

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.delta.removal import removal_frame, remove_actions
from lakeinlet.incremental.targets.merging import DELETE, newer_rows


@dataclass(frozen=True)
class Merged:
    """The rows to write in place of the removed files, the RemoveActions, and per object the
    earlier rows a replace deleted."""

    rows: Any
    removes: list[AddAction | RemoveAction]
    replaced: dict[tuple[str, str], int]

    @property
    def removed_bytes(self) -> int:
        return sum(r.size or 0 for r in self.removes)


def merged(spark: Any, dt: DeltaTable, spark_uri: str, uri: str, partition_by: Sequence[str],
           change_rows: Any, merge: Merge, replace: Sequence[PlannedObject] = ()) -> Merged:
    """Merge `change_rows` (one change per key, with `DELETE`: `merging.changes`) into the table
    at `dt`.

    Raises:
        TerminalError: files to rewrite do not match the log's paths (rewriting them without
            removing them would duplicate their rows).
    """
    from pyspark.sql import functions as F

    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    table = removal_frame(spark, spark_uri, actions, partition_by, pa.schema(dt.schema().to_arrow()))
    if table is None:
        return Merged(change_rows.where(~F.col(DELETE)).drop(DELETE), [], {})
    keys = change_rows.select(*merge.keys).distinct()
    hit = table.join(F.broadcast(keys), list(merge.keys), "left_semi").select("_path")
    replaced: dict[tuple[str, str], int] = {}
    if replace:
        earlier = table.where(tc.keys_sql(replace))
        replaced = {(r[0], r[1]): int(r[2]) for r in
                    earlier.groupBy("_source_bucket", "_source_key").count().collect()}
        hit = hit.unionByName(earlier.select("_path"))
    paths = {r[0] for r in hit.distinct().collect()}
    rows = table.where(F.col("_path").isin(sorted(paths))) if paths else table.limit(0)
    if replace:
        rows = rows.where(f"NOT ({tc.keys_sql(replace)})")
    removes = remove_actions(spark, spark_uri, actions, partition_by, paths) if paths else []
    if len(removes) != len(paths):  # rewriting without removing would duplicate the kept rows
        raise TerminalError(f"{uri}: {len(paths)} files hold rows this merge rewrites but "
                            f"{len(removes)} of them match the log's paths (first: {min(paths)})")
    return Merged(newer_rows(rows.drop("_path"), change_rows, merge), removes, replaced)
