"""Per-object checks of one Spark read: which objects cannot be loaded whole, and why. Each takes
what was read (counts, types, first bytes, errors) and returns a verdict; none reads or mutates.

- type conflicts with the table (in its first batch, with the types most objects agree on)
  → `schema_conflict`;
- bytes but no rows → read alone, strictly, to keep the root cause → `corrupt` or `missing`
  (no error and no record: a valid empty object, e.g. a CSV of only its header);
- Parquet rows read short of the footer's row count (a corrupt row group) → `corrupt`;
- size or modification time read by Spark differ from the HEAD's, or more Parquet rows read than
  the footer read with the HEAD holds → overwritten after the HEAD: its newer version's event
  loads it (`filtered`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import CORRUPT, FILTERED, MISSING, SCHEMA_CONFLICT, PlannedObject, Ref
from lakeinlet.incremental.ports import Footer, ObjectHead
from lakeinlet.incremental.read.causes import root_cause
from lakeinlet.incremental.read.verdicts import Failed, Planned
from lakeinlet.incremental.settings import ReadSection

WIDENING = {("int", "bigint"), ("float", "double"), ("int", "double"), ("bigint", "double"),
            ("date", "timestamp"), ("timestamp_ntz", "timestamp")}
HOW_TO_FIX = ("fix the object and upload it again (its new event loads it), or set --schema to cast "
              "and reset the checkpoint; --on-type-conflict fail stops the run instead")
FIRST_BATCH = "in most objects of the batch that creates the table"
HINTED = "by --schema-hints"
"""Where a type comes from when --schema-hints gives it: its objects are judged by `casts_safely`."""
HINT_FIX = ("write the column with the hinted type (or one that casts to it without loss) and upload "
            "the object again (its new event loads it), or change the hint; --on-type-conflict rescue "
            "loads the values that cast")
INTEGRAL = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 19}
"""Integer types → the decimal digits their values may need."""
DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")
TEXTUAL = ("boolean", "float", "double", "date", "timestamp", "timestamp_ntz", *INTEGRAL)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Seen:
    """What the read saw of one object: good rows, malformed records, size and mtime read."""

    rows: int
    bad: int
    size: int | None
    mtime: datetime | None
    replaced: int = 0
    """Good rows with U+FFFD in a string column: bytes the reader's charset could not decode."""
    rescued: int = 0
    """Fields of good rows moved to `_rescued_data` (`--on-type-conflict rescue`)."""
    unhinted: str = ""
    """Hinted columns whose values did not cast (`--schema-hints`), as the reason names them."""


def one_schema(objs: Sequence[PlannedObject], footers: Mapping[Ref, Footer]) -> bool:
    """Whether every object's footer was read and all have the same Parquet schema (then
    merging schemas changes nothing)."""
    found = [footers.get((o.bucket, o.key)) for o in objs]
    first = found[0] if found else None
    return first is not None and all(f is not None and f.schema.equals(first.schema) for f in found)


def as_headed(objs: Sequence[PlannedObject], paths: Sequence[str], heads: Mapping[Ref, ObjectHead],
              planned: Planned | None) -> bool:
    """Whether every object's planned file (its path URI in `paths`) has the size its HEAD saw and
    an mtime less than a second after the HEAD's (else it was overwritten since: the checked read
    names it). False when the plan's files are not known."""
    if not planned:
        return False
    for o, path in zip(objs, paths, strict=True):
        status = planned.get(path)
        if status is None:
            return False
        head = heads.get((o.bucket, o.key))
        mtime = micros(head.last_modified) if head is not None else None
        if head is not None and (status[0] != head.size or
                                 (mtime is not None and status[1] - mtime // 1000 >= 1000)):
            return False
    return True


def micros(t: datetime | None) -> int | None:
    """Microseconds since the epoch, exactly (a naive time is local, as Spark would take it)."""
    if t is None:
        return None
    aware = t if t.tzinfo is not None else t.astimezone()
    return (aware - EPOCH) // timedelta(microseconds=1)


def beyond_footer(objs: Sequence[PlannedObject], seen: Mapping[Ref, Seen],
                  footers: Mapping[Ref, Footer]) -> Failed:
    """Parquet objects that yielded more rows than the footer read with their HEAD holds: a read
    never yields more rows than its own footer, so Spark read another version (overwritten after
    the HEAD, when the plan's sizes and mtimes are the HEAD's own)."""
    out: Failed = {}
    for o in objs:
        ref = (o.bucket, o.key)
        if (s := seen.get(ref)) is not None and (f := footers.get(ref)) is not None and s.rows > f.rows:
            out[ref] = (FILTERED, f"object overwritten during the load (read {s.rows} rows, the footer "
                                  f"read with its HEAD holds {f.rows}); its newer version's event loads it")
    return out


def changed_since_head(s: Seen, head: ObjectHead | None) -> str | None:
    """Why the bytes Spark read are not the version the HEAD saw (None: same version)."""
    if head is None:
        return None
    if s.size is not None and s.size != head.size:
        return (f"object overwritten during the load (HEAD {head.size} bytes, read {s.size}); "
                "its newer version's event loads it")
    if s.mtime is not None and head.last_modified is not None and \
            (s.mtime - head.last_modified.replace(tzinfo=s.mtime.tzinfo)).total_seconds() >= 1:
        return (f"object overwritten during the load (HEAD {head.last_modified.isoformat()}, read "
                f"{s.mtime.isoformat()}); its newer version's event loads it")
    return None


def read_alone_first(s: Seen | None, found: str | None) -> bool:
    """Whether an object with bytes but no rows must be read alone to be judged (not when its
    malformed records and its first bytes already tell: `found` is what they are)."""
    return not (s is not None and s.bad and found)


def no_rows(s: Seen | None, found: str | None, alone: int | BaseException | None) -> tuple[str, str] | None:
    """The verdict on an object with bytes but no rows, from what its first bytes are (`found`)
    and its read `alone` (strictly, every column parsed: the rows, or the parser's own words for
    what it refused; None when not read: `read_alone_first`). None: a valid object that holds no
    records, e.g. a CSV of only its header, or blank lines."""
    if s is not None and s.bad:
        if found:
            return (CORRUPT, f"no parseable record ({s.bad} malformed): {found}")
        why = f": {root_cause(alone)}" if isinstance(alone, BaseException) else ""
        return (CORRUPT, f"no parseable record ({s.bad} malformed){why}")
    if isinstance(alone, BaseException):
        text = root_cause(alone)
        missing = "FileNotFound" in str(alone) or "does not exist" in text.lower()
        return (MISSING, text) if missing else (CORRUPT, f"{found}; Spark: {text}" if found else text)
    if not alone:
        return None
    return (CORRUPT, found or f"{alone} rows read alone, none in the batch's read: please report this")


def short_of_footer(seen: Mapping[Ref, Seen], promised: Mapping[Ref, int]) -> Failed:
    """Parquet objects that yielded fewer rows than their footers promise (a corrupt row group
    that `ignoreCorruptFiles` stopped at)."""
    return {ref: (CORRUPT, f"read {seen[ref].rows} rows but the Parquet footer says {n}: a row "
                           "group is corrupt") for ref, n in promised.items() if seen[ref].rows < n}


def is_merge_conflict(exc: BaseException) -> bool:
    text = str(exc)
    return "CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE" in text or "Failed to merge" in text


def widens(found: Any, want: Any) -> bool:
    """Whether a column of type `found` loads into one of type `want` (equal, or a safe cast)."""
    return bool(found == want or (found.simpleString(), want.simpleString()) in WIDENING)


def casts_safely(found: Any, want: Any) -> bool:
    """Whether every value of type `found` casts to `want` without loss (what --schema-hints casts in
    typed files): a widening, a narrower integer or decimal into a decimal with as many digits on
    each side of the point, an atomic value into a string."""
    f, w = found.simpleString(), want.simpleString()
    if widens(found, want) or (f in INTEGRAL and w in INTEGRAL and INTEGRAL[f] <= INTEGRAL[w]):
        return True
    if w == "string":
        return f in TEXTUAL or DECIMAL.fullmatch(f) is not None
    if (to := DECIMAL.fullmatch(w)) is None:
        return False
    p, s = int(to[1]), int(to[2])
    if (of := DECIMAL.fullmatch(f)) is not None:
        return s >= int(of[2]) and p - s >= int(of[1]) - int(of[2])
    return f in INTEGRAL and p - s >= INTEGRAL[f]


def conflicts(found: Mapping[str, Any], want: Mapping[str, Any], where: str = "in the table") -> list[str]:
    """Columns whose type in `found` cannot be cast safely to the type in `want` (hinted types:
    without loss, `casts_safely`)."""
    fits = casts_safely if where == HINTED else widens
    out = []
    for name, t in found.items():
        w = want.get(name)
        if w is not None and not fits(t, w):
            out.append(f"{name!r} is {w.simpleString()} {where} but {t.simpleString()} in the object")
    return out


def agreed_types(typed: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per column, the type most objects agree on: an object agrees with its own type and with
    every safe widening of it; a tie goes to the type that appears first (`typed` in event order)."""
    out: dict[str, Any] = {}
    for name in dict.fromkeys(c for t in typed for c in t):
        seen = [t[name] for t in typed if name in t]
        support = {w: sum(widens(t, w) for t in seen) for w in dict.fromkeys(seen)}
        out[name] = max(support, key=support.__getitem__)  # the first of equals: the earliest
    return out


def type_conflicts(objs: Sequence[PlannedObject], want: Mapping[str, Any],
                   typed: Mapping[Ref, Mapping[str, Any] | None], uri: Callable[[PlannedObject], str],
                   fail: bool, where: str = "in the table") -> Failed:
    """The objects whose types (`typed`; unreadable ones are judged after the read) conflict with
    `want`, as `schema_conflict`.

    Raises:
        TerminalError: with `fail` (--on-type-conflict fail), naming the first conflicting object.
    """
    out: Failed = {}
    for o in objs:
        types = typed.get((o.bucket, o.key))
        if not (found := conflicts(types, want, where) if types else []):
            continue
        why = f"type conflict: column {'; column '.join(found)} ({uri(o)})"
        fix = HINT_FIX if where == HINTED else HOW_TO_FIX
        if fail:
            raise TerminalError(f"{why}. The checkpoint did not move. To go on: {fix}, or "
                                "--on-type-conflict quarantine to load the rest")
        out[(o.bucket, o.key)] = (SCHEMA_CONFLICT, f"{why}. To load it: {fix}")
    return out


def may_hide_conflicts(settings: ReadSection, explicit: Any | None, schema: Any, objs: int,
                       pinned: Collection[str] = ()) -> bool:
    """Whether an inferred text read (no `explicit` schema) of several objects may have merged
    conflicting types into a string column of `schema` (JSON merges a number and a string, or a
    struct and a number, into a string); a `pinned` column (--schema-hints) is cast, not judged."""
    infers = settings.source_format == "json" or (
        settings.source_format == "csv" and settings.options.get("inferSchema", "").lower() == "true")
    return bool(explicit is None and infers and objs > 1 and any(
        f.dataType.simpleString() == "string" for f in schema.fields
        if f.name != "_corrupt_record" and f.name not in pinned))
