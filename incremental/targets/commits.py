"""What every target keeps in its own commits, whatever the format: lakeinlet's commit metadata
(one codec), and the checkpoint and loader batches read back from `TargetCommit`s, newest first
(each adapter turns its log, Delta history, Hudi timeline or Iceberg snapshots, into those)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from types import MappingProxyType

from lakeinlet.incremental.filter_record import FILTERS, GAP
from lakeinlet.incremental.model import (
    LOAD,
    LOADED,
    REMOVE,
    REMOVED,
    RESET,
    Checkpoint,
    Outcome,
    PlannedObject,
    Position,
    TargetCommit,
    Watermark,
)
from lakeinlet.incremental.transform_record import TRANSFORM

META = "lakeinlet."
NO_STAMP: Mapping[str, str] = MappingProxyType({})


def load_meta(app_id: str, batch_id: str, start: Position, end: Position,
              outcomes: Sequence[Outcome] | None, operation: str = LOAD, *,
              covers: Sequence[Outcome] | None = None, previous: Watermark | None = None,
              stamp: Mapping[str, str] = NO_STAMP) -> dict[str, str]:
    """Metadata of a load/remove commit, with its watermark (see `watermark`).

    Args:
        outcomes: recorded in the commit; None: the adapter keeps them elsewhere, and passes them
            as `covers` for the watermark.
        previous: the watermark of the loader's newest commit (`newest_watermark`).
        stamp: what every commit of the run records (`filter_record.stamp`: its filters).
    """
    meta = {**stamp, "operation": operation, "app_id": app_id, "batch": batch_id,
            "start": start.to_json(), "position": end.to_json()}
    if outcomes is not None:
        meta["outcomes"] = outcomes_json(outcomes)
    planned = outcomes if covers is None else covers
    return meta | watermark(planned or (), end, previous).to_meta()


def position_meta(app_id: str, start: Position | None, to: Position, reason: str,
                  operation: str = RESET, *, previous: Watermark | None = None,
                  stamp: Mapping[str, str] = NO_STAMP) -> dict[str, str]:
    """Metadata of a checkpoint-only commit (a reset, or the recorded first-run start). It keeps
    `previous`'s event time: the rows loaded before a reset are still in the table, so the table
    is as fresh as before; only the changelog version follows the checkpoint."""
    meta = {**stamp, "operation": operation, "app_id": app_id, "start": (start or Position(-1)).to_json(),
            "position": to.to_json(), "reason": reason}
    return meta | watermark((), to, previous).to_meta()


def watermark(outcomes: Sequence[Outcome], end: Position, previous: Watermark | None) -> Watermark:
    """The newest event time of `previous` and of every object the batch planned (decided ones
    too: the commit covers them), and the changelog version `end` covers. A running maximum: a
    batch of older events (a backfill, a reset that re-reads, S3's unordered delivery) never makes
    the table look staler than the rows it already holds."""
    times = [_utc(o.obj.event_time) for o in outcomes]
    if previous is not None and previous.event_time is not None:
        times.append(previous.event_time)
    return Watermark(max(times, default=None), end.complete)


def _utc(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def prefixed(meta: dict[str, str]) -> dict[str, str]:
    return {META + k: v for k, v in meta.items()}


def unprefixed(raw: dict[str, object]) -> dict[str, str]:
    return {k[len(META):]: str(v) for k, v in raw.items() if k.startswith(META) and v is not None}


def removal_outcomes(objs: Sequence[PlannedObject], decided: Sequence[Outcome],
                     counts: dict[tuple[str, str], int]) -> list[Outcome]:
    """`decided` plus one `removed` outcome per object, with the rows its removal deletes."""
    return [*decided, *(Outcome(o, REMOVED, "ObjectRemoved: its rows were deleted",
                                counts.get((o.bucket, o.key), 0)) for o in objs)]


def replacing(outcomes: Sequence[Outcome], earlier: Sequence[PlannedObject]) -> list[PlannedObject]:
    """The objects of `earlier` this batch loads (one set aside replaces nothing)."""
    wanted = {(o.bucket, o.key) for o in earlier}
    return [o.obj for o in outcomes if o.status == LOADED and (o.obj.bucket, o.obj.key) in wanted]


def replaced_outcomes(outcomes: Sequence[Outcome], counts: dict[tuple[str, str], int]) -> list[Outcome]:
    """`outcomes` with the rows each load deleted of its object's earlier versions."""
    out = []
    for o in outcomes:
        n = counts.get((o.obj.bucket, o.obj.key), 0) if o.status == LOADED else 0
        note = f"replaced {n} rows of earlier versions"
        out.append(replace(o, reason=f"{o.reason}; {note}" if o.reason else note, replaced_rows=n)
                   if n else o)
    return out


def keys_sql(objs: Sequence[PlannedObject]) -> str:
    """A Spark SQL predicate matching the rows of `objs` by _source_bucket/_source_key (no objects:
    no rows, e.g. a removal batch whose every removal was set aside)."""
    if not objs:
        return "FALSE"
    refs = sorted({f"{o.bucket}\x1f{o.key}" for o in objs})
    return (f"concat_ws(char(31), _source_bucket, _source_key) IN "
            f"({', '.join(_sql_string(r) for r in refs)})")


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def outcomes_json(outcomes: Sequence[Outcome]) -> str:
    return json.dumps([o.to_list() for o in outcomes], default=str)


def outcomes_from(text: str) -> list[Outcome]:
    return [Outcome.from_list(v) for v in json.loads(text)]


def checkpoint_from(commits: Iterable[TargetCommit], app_id: str, version: int) -> Checkpoint:
    """The position of the newest of `commits` (newest first) that is ours and carries one, with
    the newest watermark among them (commits of others, and without lakeinlet metadata, such as
    compactions, are skipped)."""
    ours = [c for c in commits if c.is_ours(app_id)]
    at = next((c for c in ours if c.position is not None), None)
    if at is None:
        return Checkpoint(None, version)
    return Checkpoint(at.position, version, at.timestamp, watermark_from(ours, app_id),
                      at.meta.get(FILTERS), at.meta.get(GAP), at.meta.get(TRANSFORM))


def watermark_from(commits: Iterable[TargetCommit], app_id: str) -> Watermark | None:
    """The watermark of the newest of `commits` (newest first) that is ours and carries one."""
    return next((w for c in commits if c.is_ours(app_id) and (w := c.watermark) is not None), None)


def newest_watermark(commits: Callable[[int | None], Sequence[TargetCommit]],
                     app_id: str) -> Watermark | None:
    """`watermark_from` the target's commits (its `commits(limit)`): the table's newest commit is
    nearly always the loader's own, so it is read alone first."""
    found = watermark_from(commits(1), app_id)
    return found if found is not None else watermark_from(commits(None), app_id)


def batches_after(commits: Iterable[TargetCommit], app_id: str, target_version: int,
                  outcomes_of: Callable[[TargetCommit], list[Outcome]] | None = None,
                  ) -> list[tuple[int, str, list[Outcome]]]:
    """(version, batch id, outcomes) of our load/remove commits after `target_version`, oldest
    first; `outcomes_of` reads outcomes an adapter keeps outside the commit metadata."""
    out = []
    for c in commits:
        if c.version <= target_version:
            break
        if c.is_ours(app_id) and c.operation in (LOAD, REMOVE):
            found = outcomes_of(c) if outcomes_of else outcomes_from(c.meta.get("outcomes", "[]"))
            out.append((c.version, c.meta.get("batch", ""), found))
    return sorted(out, key=lambda item: item[0])


def newest_reset(commits: Iterable[TargetCommit], app_id: str) -> TargetCommit | None:
    """The newest reset of this loader (to tell whether a reset request was already applied)."""
    return next((c for c in commits if c.is_ours(app_id) and c.operation == RESET), None)
