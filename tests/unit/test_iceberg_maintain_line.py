"""The Iceberg `maintain` line beside a live loader: what the rewrite replaced and wrote, and what
loaders added meanwhile (before: "files 7 → 1 … rewrote 12", figures that did not add up)."""

from __future__ import annotations

from types import SimpleNamespace

from pyiceberg.table.snapshots import Operation, Summary

from lakeinlet.incremental.commands.maintain import line
from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.targets.iceberg.maintain import meanwhile


def snap(sid: int, parent: int | None, op: Operation, added: int, deleted: int = 0) -> SimpleNamespace:
    summary = Summary(op, **{"added-data-files": str(added), "deleted-data-files": str(deleted)})
    return SimpleNamespace(snapshot_id=sid, parent_snapshot_id=parent, summary=summary)


def table() -> SimpleNamespace:
    """main: 1 (before maintain) ← 2 a load of 5 files ← 3 the rewrite of 12 into 1 ← 4 a load of 1."""
    snaps = {1: snap(1, None, Operation.APPEND, 7), 2: snap(2, 1, Operation.APPEND, 5),
             3: snap(3, 2, Operation.REPLACE, 1, 12), 4: snap(4, 3, Operation.APPEND, 1)}
    return SimpleNamespace(metadata=SimpleNamespace(current_snapshot_id=4), snapshot_by_id=snaps.get)


def test_the_line_says_what_the_rewrite_and_the_loader_did() -> None:
    detail = meanwhile(table(), {1})
    assert detail == "the rewrite replaced 12 files with 1; meanwhile 2 loader commits added 6 files"
    text = line("s3://lake/t", Compaction(7, 700, 2, 800, 12, 3, detail), dry_run=False)
    assert text.startswith("s3://lake/t: files 7 → 2, ")
    assert text.endswith("rewrote 12 files in version 3; the rewrite replaced 12 files with 1; meanwhile "
                         "2 loader commits added 6 files")
