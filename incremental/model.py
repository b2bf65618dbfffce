"""Values that cross the loader's ports: positions, checkpoints, planned objects, outcomes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lakeinlet.events import NULL_VERSION, REMOVALS

CHECKPOINT_FORMAT = 1
Ref = tuple[str, str]
"""An object by its place: (bucket, key)."""
VersionRef = tuple[str, str, str]
"""One version of an object: (bucket, key, identity), as `PlannedObject.ref` spells it."""
LOADED, MISSING, CORRUPT, FILTERED, TOO_LARGE = "loaded", "missing", "corrupt", "filtered", "too_large"
SCHEMA_CONFLICT, REMOVED, UNROUTED = "schema_conflict", "removed", "unrouted"
STATUSES = (LOADED, MISSING, CORRUPT, FILTERED, TOO_LARGE, SCHEMA_CONFLICT, REMOVED, UNROUTED)
FINAL = frozenset({LOADED, CORRUPT, TOO_LARGE})
"""Statuses after which the same object version is never planned again. Missing, filtered and
schema-conflicting objects are planned again when an event for them comes again (a backfill, or
a checkpoint reset after the operator changed --schema); `removed` rows say an `ObjectRemoved`
event deleted the object's rows (with --on-delete remove-rows); `unrouted` rows (in the routes'
own ledger) say an object matched no route."""


@dataclass(frozen=True, order=True)
class Position:
    """A changelog position: every version <= `complete` consumed, plus the first `offset` rows
    (in planning order) of version `complete + 1`. `Position(-1)` is the start."""

    complete: int
    offset: int = 0

    def to_json(self) -> str:
        return json.dumps({"format": CHECKPOINT_FORMAT, "complete": self.complete,
                           "offset": self.offset}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Position:
        doc = json.loads(text)
        if int(doc.get("format", 0)) != CHECKPOINT_FORMAT:
            raise ValueError(f"checkpoint format {doc.get('format')!r}: expected {CHECKPOINT_FORMAT}")
        return cls(int(doc["complete"]), int(doc.get("offset", 0)))

    def __str__(self) -> str:
        """What users read (docs/concepts/positions.md): `3` (through version 3), `4@8` (through version
        3 and the first 8 rows of version 4), `start` (nothing consumed)."""
        if self.offset:
            return f"{self.complete + 1}@{self.offset}"
        return "start" if self.complete < 0 else str(self.complete)

    def fields(self) -> dict[str, int]:
        """The numbers, for machine-readable output (`checkpoint show --json`)."""
        return {"complete": self.complete, "offset": self.offset}


@dataclass(frozen=True)
class Watermark:
    """How fresh a target is, as each of the loader's commits records it: the newest S3 event time
    among every object its commits planned so far (None: none yet), and the changelog version its
    checkpoint covers (every version <= it consumed; -1: none)."""

    event_time: datetime | None
    changelog_version: int

    def to_meta(self) -> dict[str, str]:
        meta = {"changelog_version": str(self.changelog_version)}
        if self.event_time is not None:
            meta["newest_event_time"] = self.event_time.isoformat()
        return meta

    @classmethod
    def from_meta(cls, meta: dict[str, str]) -> Watermark | None:
        """The watermark of commit metadata (None: a commit written before lakeinlet recorded one)."""
        if "changelog_version" not in meta:
            return None
        text = meta.get("newest_event_time")
        return cls(datetime.fromisoformat(text) if text else None, int(meta["changelog_version"]))


@dataclass(frozen=True)
class Checkpoint:
    """The loader's checkpoint as read from the target table (None position: never loaded)."""

    position: Position | None
    target_version: int
    committed_at: datetime | None = None
    watermark: Watermark | None = None
    """The newest watermark the loader's commits carry (None: none records one)."""
    filters: str | None = None
    """The filters the checkpoint was made under (`filter_record`; None: not recorded)."""
    filters_gap: str | None = None
    """The versions planned under narrower filters, not re-read since (`filter_record.Gap`)."""
    transform: str | None = None
    """The transform the checkpoint was made under (`transform_record`; None: not recorded)."""


LOAD, REMOVE, RESET, START = "load", "remove", "checkpoint-reset", "checkpoint-start"
"""Target commit operations: a batch of loads, a batch of row removals, an operator's reset, and
the position a first run with `--on-missing-checkpoint latest` starts from."""
CHECKPOINTING = (LOAD, REMOVE, RESET, START)


@dataclass(frozen=True)
class TargetCommit:
    """One commit of the target as lakeinlet sees it (`meta` without the `lakeinlet.` prefix)."""

    version: int
    timestamp: datetime
    meta: dict[str, str] = field(default_factory=dict)
    files: int | None = None
    """Data files the commit added (None where the format does not say)."""
    bytes: int | None = None

    @property
    def operation(self) -> str | None:
        return self.meta.get("operation")

    @property
    def position(self) -> Position | None:
        text = self.meta.get("position")
        return Position.from_json(text) if text else None

    @property
    def start(self) -> Position | None:
        text = self.meta.get("start")
        return Position.from_json(text) if text else None

    @property
    def watermark(self) -> Watermark | None:
        return Watermark.from_meta(self.meta)

    def is_ours(self, app_id: str) -> bool:
        return self.meta.get("app_id") == app_id and self.operation in CHECKPOINTING



@dataclass(frozen=True)
class ChangeRow:
    """One changelog row, with where it sits in the changelog (version, index in planning order)."""

    event_id: str
    bucket: str
    key: str
    event_name: str
    event_time: datetime
    size: int | None
    etag: str | None
    version_id: str | None
    sequencer: str | None
    commit_version: int
    index: int

    @property
    def is_removed(self) -> bool:
        """An `ObjectRemoved` or `LifecycleExpiration` event (a lifecycle rule's deletion)."""
        return self.event_name.startswith(REMOVALS)


@dataclass(frozen=True)
class PlannedObject:
    """One object version to load (or to record why not)."""

    bucket: str
    key: str
    etag: str | None
    version_id: str | None
    size: int
    event_id: str
    event_time: datetime
    commit_version: int
    event_name: str = field(default="", compare=False)
    """The S3 event name (`ObjectCreated:Put`, `ObjectRemoved:Delete`, …) as planned; "" where
    unknown (outcomes read back from a commit do not carry it: not part of an object's identity)."""

    @property
    def deletes_one_version(self) -> bool:
        """A removal of one version of a versioned bucket's object (a `DELETE ?versionId=`, or a
        lifecycle rule expiring a noncurrent version): the key's other versions may still be there,
        unlike a delete marker's or an unversioned object's removal."""
        version = None if self.version_id == NULL_VERSION else self.version_id
        return bool(version) and self.event_name.endswith(":Delete")

    @property
    def identity(self) -> str:
        """Object version identity: version id, else etag (unquoted), else the event id. S3's
        "null" version id is no version (changelog rows written before the poller dropped it)."""
        version = None if self.version_id == NULL_VERSION else self.version_id
        return version or (self.etag or "").strip('"') or self.event_id

    @property
    def ref(self) -> VersionRef:
        return (self.bucket, self.key, self.identity)


@dataclass(frozen=True)
class Outcome:
    """What happened to one planned object: a future ledger row."""

    obj: PlannedObject
    status: str
    reason: str = ""
    rows: int = 0
    bad_records: int = 0
    replaced_rows: int = 0
    """Rows of earlier versions of the object deleted with this load (--on-overwrite replace)."""

    def to_list(self) -> list[object]:
        o = self.obj
        return [o.bucket, o.key, o.etag, o.version_id, o.size, o.event_id, o.event_time.isoformat(),
                o.commit_version, self.status, self.reason, self.rows, self.bad_records,
                self.replaced_rows]

    @classmethod
    def from_list(cls, v: list[object]) -> Outcome:
        obj = PlannedObject(str(v[0]), str(v[1]), v[2], v[3], int(v[4]),  # type: ignore[arg-type,call-overload]
                            str(v[5]), datetime.fromisoformat(str(v[6])), int(v[7]))  # type: ignore[call-overload]
        replaced = int(v[12]) if len(v) > 12 else 0  # type: ignore[call-overload]  # older commits hold 12
        return cls(obj, str(v[8]), str(v[9]), int(v[10]), int(v[11]), replaced)  # type: ignore[call-overload]


@dataclass(frozen=True)
class WriteCheck:
    """What a write of rows not read ahead (one pass) must show before it is committed: every row
    found its lineage, and the rows written are the `promised` rows of the objects' footers (a
    read never yields more rows than a footer holds, so equal sums mean every object was read
    whole). `observed`: the Spark Observation of the write (`rows`, `unmatched`)."""

    promised: int
    observed: Any

    def problem(self) -> str | None:
        """Why the write must not be committed (None: commit it): the batch is then read again
        and checked object by object, which names the status of each. Waits for the write."""
        metrics = self.observed.get
        if metrics.get("unmatched"):
            return f"{metrics['unmatched']} rows without lineage"
        if int(metrics.get("rows", -1)) != self.promised:
            return f"wrote {metrics.get('rows')} rows, the footers promise {self.promised}"
        return None


@dataclass(frozen=True)
class LoadPlan:
    """One batch: the objects to read, the outcomes already decided, and where it ends."""

    start: Position
    end: Position
    to_read: tuple[PlannedObject, ...]
    decided: tuple[Outcome, ...] = ()
    skipped_known: int = 0
    superseded: int = 0
    events: int = 0
    versions: tuple[int, ...] = field(default=())
    removals: tuple[PlannedObject, ...] = ()
    """Objects whose rows this batch deletes (--on-delete remove-rows; such a batch reads nothing)."""

    @property
    def empty(self) -> bool:
        return self.events == 0

    @property
    def bytes(self) -> int:
        return sum(o.size for o in self.to_read)
