"""Pure planning: changelog rows after a position → one bounded batch of objects to load.

No I/O here: the loader passes the rows, the ledger's known object versions and the caps.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from lakeinlet.incremental.artefacts import artefact
from lakeinlet.incremental.model import (
    FILTERED,
    TOO_LARGE,
    UNROUTED,
    ChangeRow,
    LoadPlan,
    Outcome,
    PlannedObject,
    Position,
)

Verdict = tuple[str, str]
"""A set-aside object's ledger status and reason."""
IDENTICAL = ("identical content: the same bytes (ETag {etag}) as version {version} of this key, already "
             "loaded; a re-upload adds no rows")


class KeyFilter(Protocol):
    """Which keys a loader plans at all (`owns`), and which of those it records as set aside."""

    def owns(self, key: str) -> bool: ...

    def verdict(self, bucket: str, key: str) -> Verdict | None:
        """The status and reason `bucket/key` is set aside with, or None when it is loaded."""
        ...


@dataclass(frozen=True)
class Filters:
    """Key filters: include prefixes/suffixes/regex/globs (all must pass), then ignored prefixes,
    exclude globs and writers' artefacts (see `artefacts`) set aside."""

    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    regex: str | None = None
    ignore_prefix: tuple[str, ...] = ()
    routed: bool = False
    """One route of several: keys its prefix/suffix/regex/include globs do not select belong to
    other routes, so they are skipped without a ledger row (the other filters still record)."""
    rejected_status: str = FILTERED
    include_glob: tuple[str, ...] = ()
    exclude_glob: tuple[str, ...] = ()
    include_hidden: bool = False

    @classmethod
    def of(cls, plan: Any, routed: bool = False) -> Filters:
        """The filters of a `PlanSection`."""
        return cls(tuple(plan.prefix), tuple(plan.suffix), plan.regex, tuple(plan.ignore_prefix), routed,
                   include_glob=tuple(plan.include_glob), exclude_glob=tuple(plan.exclude_glob),
                   include_hidden=plan.include_hidden)

    def selects(self, key: str) -> bool:
        """The key passes the prefix, suffix and regex filters."""
        return self._outside(key) is None

    def owns(self, key: str) -> bool:
        return not self.routed or self.selects(key)

    def verdict(self, bucket: str, key: str) -> Verdict | None:
        why = self.reject(key)
        return None if why is None else (self.rejected_status, why)

    def reject(self, key: str) -> str | None:
        """Why `key` is filtered out, or None when it is loaded."""
        if any(key.startswith(p) for p in self.ignore_prefix):
            return "key under an ignored prefix"
        outside = self._outside(key)
        if outside:
            return outside
        glob = next((g for g in self.exclude_glob if fnmatch.fnmatchcase(key, g)), None)
        if glob is not None:
            return f"key matches --exclude-glob {glob}"
        return None if self.include_hidden else artefact(key, self.prefix)

    def _outside(self, key: str) -> str | None:
        if self.prefix and not key.startswith(self.prefix):
            return "key outside --prefix"
        if self.suffix and not key.endswith(self.suffix):
            return "key without a wanted --suffix"
        if self.regex and not re.search(self.regex, key):
            return "key does not match --regex"
        if self.include_glob and not any(fnmatch.fnmatchcase(key, g) for g in self.include_glob):
            return "key matches no --include-glob"
        return None


@dataclass(frozen=True)
class Unrouted:
    """The keys no route selects: each is recorded once, as `unrouted`, in the routes' own ledger."""

    routes: tuple[Filters, ...]
    rejected_status: str = UNROUTED

    def owns(self, key: str) -> bool:
        return not any(f.selects(key) for f in self.routes)

    def verdict(self, bucket: str, key: str) -> Verdict | None:
        return (self.rejected_status, "the key matches no route")


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
         version_sizes: dict[int, int],
         owns: Callable[[str], bool] = lambda _: True) -> tuple[list[ChangeRow], Position]:
    """The rows after `start` that fit the caps (at least one), and the position after them.

    `max_files` counts distinct objects: a later (or earlier) event of an object the batch
    already holds rides along without counting, as planning keeps only its newest event.

    Args:
        rows: changelog rows in planning order, from version `start.complete + 1` on.
        version_sizes: rows per changelog version, to tell whether a version was read fully.
        owns: rows of keys it refuses (other routes') are taken without counting to the caps.
    """
    taken: list[ChangeRow] = []
    tally = _Tally(caps)
    for row in rows:
        if row.commit_version <= start.complete or (
                row.commit_version == start.complete + 1 and row.index < start.offset):
            continue
        if owns(row.key) and not tally.admit(row):
            break
        taken.append(row)
    if not taken:
        return [], start
    last = taken[-1]
    if last.index + 1 >= version_sizes.get(last.commit_version, last.index + 1):
        return taken, Position(last.commit_version)
    return taken, Position(last.commit_version - 1, last.index + 1)


class _Tally:
    """What a batch holds so far: its objects (with the bytes read for each) and its first row."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.objects: dict[tuple[str, str], int] = {}
        self.files = self.size = 0
        self.first: ChangeRow | None = None

    def admit(self, row: ChangeRow) -> bool:
        """Whether `row` fits the caps; if it does, it is counted. A removal of an object the
        batch holds still counts: it changes what the batch does with it (rows kept or removed)."""
        caps, ident = self.caps, (row.bucket, row.key)
        row_bytes = row.size or 0
        row_bytes = 0 if row_bytes > caps.max_bytes or row.is_removed else row_bytes  # never read
        held = self.objects.get(ident)
        extra = row_bytes if held is None else max(0, row_bytes - held)
        files = self.files + (held is None or row.is_removed)
        if self.files and (files > caps.max_files or self.size + extra > caps.max_bytes):
            return False
        if self.first is not None and caps.split_removals and row.is_removed != self.first.is_removed:
            return False
        self.objects[ident] = max(row_bytes, held or 0)
        self.files, self.size = files, self.size + extra
        self.first = self.first or row
        return True


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
                         r.event_time, r.commit_version, r.event_name)


def plan_batch(rows: Sequence[ChangeRow], start: Position, caps: Caps, filters: KeyFilter,
               version_sizes: dict[int, int],
               known: Callable[[Sequence[PlannedObject]], set[tuple[str, str, str]]],
               identical: Callable[[Sequence[PlannedObject]], dict[tuple[str, str, str], str]] = (
                   lambda _: {})) -> LoadPlan:
    """Plan one batch.

    Args:
        known: given candidate objects, returns the `ref`s the ledger already holds in a final
            status (those are skipped: a duplicate notification or a backfill of a loaded object).
        identical: given the rest, returns the `ref`s that are a new version of a loaded object
            with the same ETag, each with the loaded version's identity (recorded `filtered`: the
            same bytes uploaded again, in every --on-overwrite mode).
    """
    taken, end = take(rows, start, caps, version_sizes, filters.owns)
    newest, superseded = newest_per_object(taken)
    decided: list[Outcome] = []
    candidates: list[PlannedObject] = []
    removals: list[PlannedObject] = []
    for r in newest:
        if not filters.owns(r.key):
            continue
        obj = planned(r)
        found = filters.verdict(r.bucket, r.key)
        if r.is_removed and not found:
            if caps.split_removals:
                removals.append(obj)
                continue
            found = (FILTERED, "ObjectRemoved: ingest is append-only, rows already loaded are kept")
        if found:
            decided.append(Outcome(obj, *found))
        elif obj.size > caps.max_bytes:
            decided.append(Outcome(obj, TOO_LARGE, f"{obj.size} bytes > --max-bytes {caps.max_bytes}"))
        else:
            candidates.append(obj)
    seen = known(candidates) if candidates else set()
    new = [o for o in candidates if o.ref not in seen]
    same = identical(new) if new else {}
    decided += [Outcome(o, FILTERED, IDENTICAL.format(etag=(o.etag or "").strip('"'), version=same[o.ref]))
                for o in new if o.ref in same]
    to_read = tuple(o for o in new if o.ref not in same)
    return LoadPlan(start=start, end=end, to_read=to_read, decided=tuple(decided),
                    skipped_known=len(candidates) - len(new), superseded=superseded,
                    events=len(taken), versions=tuple(sorted({r.commit_version for r in taken})),
                    removals=tuple(removals))
