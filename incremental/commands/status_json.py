"""`lakeinlet-load status --json`: one JSON object per route, its fields declared once here (the
reference page docs/reference/status-json.md is generated from `FIELDS`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lakeinlet.aws import client
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.commands.status import shown
from lakeinlet.incremental.filter_record import FilterRecord, gap_of
from lakeinlet.incremental.wiring import Parts, build_cleanup
from lakeinlet.queues import QueueDepths, queue_url_of, read_depths

FIELDS: tuple[tuple[str, str, str], ...] = (
    ("route", "string", "the route's name (`--routes-file`); `\"\"` for a single table"),
    ("changelog", "string", "the changelog table read"),
    ("target", "string", "the target table loaded (absolute path or `s3://`)"),
    ("head", "integer", "the changelog's newest version (-1: empty)"),
    ("checkpoint", "string or null", "the loader's position as `checkpoint show` prints it (`3`, `4@8`, "
     "`start`); null: never loaded"),
    ("complete", "integer or null", "the newest changelog version wholly consumed"),
    ("offset", "integer or null", "rows consumed of the version after `complete`"),
    ("lag_versions", "integer", "changelog versions after the checkpoint"),
    ("lag_events", "integer", "events (changelog rows) not loaded yet"),
    ("lag_bytes", "integer or null", "bytes of the objects those versions announce (null: a pending "
     "commit does not record them)"),
    ("lag_seconds", "number", "age of the oldest pending changelog commit (0: caught up)"),
    ("newest_event_time", "string or null", "ISO time of the newest S3 event loaded into the target"),
    ("freshness_seconds", "number or null", "now − `newest_event_time` (null: no event loaded yet)"),
    ("last_batch_version", "integer", "the target version holding the checkpoint (-1: none)"),
    ("last_batch_at", "string or null", "ISO time of that commit, the loader's last batch or reset"),
    ("catalog", "string or null", "`--catalog`, when given"),
    ("catalog_in_step", "boolean or null", "whether the catalog entry matches the table (null: no "
     "--catalog, or the table has no commit yet)"),
    ("catalog_problem", "string or null", "what differs, or why it is not known"),
    ("filters_gap", "string or null", "versions planned under narrower filters than this run's"),
    ("queue", "object or null", "`{\"visible\", \"in_flight\", \"delayed\"}` of `--queue-url` "
     "(null: not given)"),
    ("dlq", "object or null", "the same of `--dlq-url`, or of the queue's RedrivePolicy target"),
    ("cleanup_backlog", "object or null", "with `--after-load`: `{\"due\", \"waiting\"}`, the source "
     "objects loaded but not cleaned up yet, past `--after-load-retention-hours` (the next pass's) "
     "or not yet, counted from the ledger and the cleanup log (null: cleanup off)"),
)
"""(name, JSON type, meaning) of every key of the object, in the order it is printed."""


def status_object(parts: Parts, queue_url: str | None, dlq_url: str | None, route: str = "",
                  now: datetime | None = None) -> dict[str, Any]:
    """The object `status --json` prints for one route: every key of `FIELDS`, null where unknown."""
    view = ck.show(parts.target, parts.changelog, now)
    cp, pos = view.checkpoint, view.checkpoint.position
    verdict = parts.catalog_verdict()
    gap = gap_of(cp, FilterRecord.of(parts.config.plan))
    queue, dlq = queue_objects(parts, queue_url, dlq_url)
    mark = view.watermark
    return {"route": route, "changelog": shown(parts.changelog.uri), "target": shown(parts.target.uri),
            "head": view.head, "checkpoint": str(pos) if pos else None,
            "complete": pos.complete if pos else None, "offset": pos.offset if pos else None,
            "lag_versions": view.lag_versions, "lag_events": view.lag_events,
            "lag_bytes": view.lag_bytes, "lag_seconds": view.lag_seconds,
            "newest_event_time": mark.event_time.isoformat() if mark and mark.event_time else None,
            "freshness_seconds": view.freshness_seconds, "last_batch_version": cp.target_version,
            "last_batch_at": cp.committed_at.isoformat() if cp.committed_at else None,
            "catalog": parts.config.tables.catalog,
            "catalog_in_step": verdict[0] if verdict else None,
            "catalog_problem": (verdict[1] or None) if verdict else None,
            "filters_gap": gap.line(parts.route) if gap else None, "queue": queue, "dlq": dlq,
            "cleanup_backlog": cleanup_backlog(parts)}


def cleanup_backlog(parts: Parts) -> dict[str, int] | None:
    """The source objects `--after-load` has still to clean up (None: it is off)."""
    cleanup = build_cleanup(parts)
    if cleanup is None:
        return None
    found = cleanup.backlog()
    return {"due": found.left, "waiting": found.waiting}


def queue_objects(parts: Parts, queue_url: str | None,
                  dlq_url: str | None) -> tuple[dict[str, int] | None, dict[str, int] | None]:
    """The depths of the queue and its DLQ (found from the RedrivePolicy without --dlq-url)."""
    if not (queue_url or dlq_url):
        return None, None
    sqs = client("sqs", parts.config.aws)
    queue = read_depths(sqs, queue_url) if queue_url else None
    if queue and not dlq_url and queue.dlq_arn:
        dlq_url = queue_url_of(sqs, queue.dlq_arn)
    dlq = read_depths(sqs, dlq_url) if dlq_url else None
    return _depths(queue), _depths(dlq)


def _depths(d: QueueDepths | None) -> dict[str, int] | None:
    return {"visible": d.visible, "in_flight": d.in_flight, "delayed": d.delayed} if d else None
