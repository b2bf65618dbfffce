"""Pure planning: changelog rows after a position → one bounded batch of objects to load.

No I/O here: the loader passes the rows, the ledger's known object versions and the caps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lakeinlet.incremental.model import (
    FILTERED,
    TOO_LARGE,
    ChangeRow,
    LoadPlan,
    Outcome,
    PlannedObject,
    Position,
)


@dataclass(frozen=True)
class Filters:
    """Key filters: include prefixes/suffixes/regex (all must pass), ignored prefixes."""

    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    regex: str | None = None
    ignore_prefix: tuple[str, ...] = ()

    def reject(self, key: str) -> str | None:
        """Why `key` is filtered out, or None when it is loaded."""
        if any(key.startswith(p) for p in self.ignore_prefix):
            return "key under an ignored prefix"
        if self.prefix and not key.startswith(self.prefix):
            return "key outside --prefix"
        if self.suffix and not key.endswith(self.suffix):
            return "key without a wanted --suffix"
        if self.regex and not re.search(self.regex, key):
            return "key does not match --regex"
        return None


@dataclass(frozen=True)
class Caps:
    max_files: int
    max_bytes: int
    split_removals: bool = False
    """With --on-delete remove-rows: a batch holds only creations or only removals (each commit
    then either appends or deletes rows), in changelog order."""
    replace_overwritten: bool = False
    """With --on-overwrite replace: a new version of an object already loaded deletes the earlier
    versions' rows in the commit that adds its own."""


def rows_from_records(records: Iterable[dict[str, Any]]) -> list[ChangeRow]:
    """Changelog records (dicts with `_commit_version`) → rows in planning order.

    Planning order inside a version is (event_time, event_id): deterministic, so an offset into
    a version means the same rows on every re-read.
    """
    recs = sorted(records, key=lambda r: (r["_commit_version"], r["event_time"], r["event_id"]))
    out: list[ChangeRow] = []
    index, last_version = 0, None
    for r in recs:
        index = 0 if r["_commit_version"] != last_version else index + 1
        last_version = r["_commit_version"]
        out.append(ChangeRow(r["event_id"], r["bucket"], r["key"], r["event_name"], r["event_time"],
                             r.get("size"), r.get("etag"), r.get("version_id"), r.get("sequencer"),
                             int(r["_commit_version"]), index))
    return out


def take(rows: Sequence[ChangeRow], start: Position, caps: Caps,
         version_sizes: dict[int, int]) -> tuple[list[ChangeRow], Position]:
    """The rows after `start` that fit the caps (at least one), and the position after them.

    Args:
        rows: changelog rows in planning order, from version `start.complete + 1` on.
        version_sizes: rows per changelog version, to tell whether a version was read fully.
    """
    taken: list[ChangeRow] = []
    files = size = 0
    for row in rows:
        if row.commit_version <= start.complete or (
                row.commit_version == start.complete + 1 and row.index < start.offset):
            continue
        row_bytes = row.size or 0
        row_bytes = 0 if row_bytes > caps.max_bytes or row.is_removed else row_bytes  # never read
        if taken and (files + 1 > caps.max_files or size + row_bytes > caps.max_bytes):
            break
        if taken and caps.split_removals and row.is_removed != taken[0].is_removed:
            break
        taken.append(row)
        files, size = files + 1, size + row_bytes
    if not taken:
        return [], start
    last = taken[-1]
    if last.index + 1 >= version_sizes.get(last.commit_version, last.index + 1):
        return taken, Position(last.commit_version)
    return taken, Position(last.commit_version - 1, last.index + 1)


def newest_per_object(rows: Sequence[ChangeRow]) -> tuple[list[ChangeRow], int]:
    """Keep the newest event per (bucket, key): by event time, sequencer, changelog order."""
    best: dict[tuple[str, str], ChangeRow] = {}
    for r in rows:
        cur = best.get((r.bucket, r.key))
        if cur is None or _order(r) >= _order(cur):
            best[(r.bucket, r.key)] = r
    kept = sorted(best.values(), key=lambda r: (r.commit_version, r.index))
    return kept, len(rows) - len(kept)


def _order(r: ChangeRow) -> tuple[Any, ...]:
    seq = (r.sequencer or "").rjust(32, "0")
    return (r.event_time, seq, r.commit_version, r.index)


def planned(r: ChangeRow) -> PlannedObject:
    return PlannedObject(r.bucket, r.key, r.etag, r.version_id, int(r.size or 0), r.event_id,
                         r.event_time, r.commit_version)


def plan_batch(rows: Sequence[ChangeRow], start: Position, caps: Caps, filters: Filters,
               version_sizes: dict[int, int],
               known: Callable[[Sequence[PlannedObject]], set[tuple[str, str, str]]]) -> LoadPlan:
    """Plan one batch.

    Args:
        known: given candidate objects, returns the `ref`s the ledger already holds in a final
            status (those are skipped: a duplicate notification or a backfill of a loaded object).
    """
    taken, end = take(rows, start, caps, version_sizes)
    newest, superseded = newest_per_object(taken)
    decided: list[Outcome] = []
    candidates: list[PlannedObject] = []
    removals: list[PlannedObject] = []
    for r in newest:
        obj = planned(r)
        why = filters.reject(r.key)
        if r.is_removed and not why:
            if caps.split_removals:
                removals.append(obj)
                continue
            why = "ObjectRemoved: ingest is append-only, rows already loaded are kept"
        if why:
            decided.append(Outcome(obj, FILTERED, why))
        elif obj.size > caps.max_bytes:
            decided.append(Outcome(obj, TOO_LARGE, f"{obj.size} bytes > --max-bytes {caps.max_bytes}"))
        else:
            candidates.append(obj)
    seen = known(candidates) if candidates else set()
    to_read = tuple(o for o in candidates if o.ref not in seen)
    return LoadPlan(start=start, end=end, to_read=to_read, decided=tuple(decided),
                    skipped_known=len(candidates) - len(to_read), superseded=superseded,
                    events=len(taken), versions=tuple(sorted({r.commit_version for r in taken})),
                    removals=tuple(removals))
