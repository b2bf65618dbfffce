"""`status`: one screen with queue and DLQ depth, changelog head, checkpoint, lag and freshness."""

from __future__ import annotations

import argparse
import json
from datetime import datetime

from lakeinlet.aws import client
from lakeinlet.incremental.changelog_reader import require as require_changelog
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.wiring import Parts
from lakeinlet.logs import say
from lakeinlet.queues import queue_url_of, read_depths
from lakeinlet.storage import TableLocation


def status_lines(parts: Parts, queue_url: str | None, dlq_url: str | None,
                 now: datetime | None = None) -> list[str]:
    """The status screen as lines (see `queue_lines` and `table_lines`)."""
    return queue_lines(parts, queue_url, dlq_url) + table_lines(parts, now)


def queue_lines(parts: Parts, queue_url: str | None, dlq_url: str | None) -> list[str]:
    """Queue and DLQ depth (only when a URL is given; the DLQ is found from the queue's
    RedrivePolicy when --dlq-url is not given)."""
    lines = []
    if queue_url or dlq_url:
        sqs = client("sqs", parts.config.aws)
        if queue_url:
            depths = read_depths(sqs, queue_url)
            lines.append(f"queue: {depths.line()}")
            dlq_url = dlq_url or (queue_url_of(sqs, depths.dlq_arn) if depths.dlq_arn else None)
        dlq = read_depths(sqs, dlq_url).line() if dlq_url else "none (no RedrivePolicy)"
        lines.append(f"dlq:   {dlq}")
    return lines


def table_lines(parts: Parts, now: datetime | None = None) -> list[str]:
    """Changelog head, checkpoint, lag and freshness measured at `now`, and the catalog entry."""
    view = ck.show(parts.target, parts.changelog, now)
    head = view.pending[-1].timestamp.isoformat(timespec="seconds") if view.pending else "-"
    lines = [f"changelog: {shown(parts.changelog.uri)} head version {view.head} "
             f"(newest pending commit {head})",
             f"target:    {shown(parts.target.uri)}", *view.lines()[0:1], *view.lines()[2:3],
             view.freshness_line()]
    catalog = parts.catalog_line()
    filters = parts.filters_line()
    return lines + [line for line in (catalog, filters) if line]


def shown(uri: str) -> str:
    """One form for every format's table: an absolute path, or `s3://` (Delta keeps the path it
    was given, Hudi an absolute one, Iceberg the `s3a://` Spark writes)."""
    return TableLocation(uri).resolved().uri


def cmd_status(parts: Parts, args: argparse.Namespace) -> int:
    if args.json:  # one object, after the changelog check: its fields need the head
        from lakeinlet.incremental.commands.status_json import status_object  # it imports `shown`

        require_changelog(parts.changelog)
        say(json.dumps(status_object(parts, args.queue_url, args.dlq_url, args.route_name)))
        return 0
    if queues := queue_lines(parts, args.queue_url, args.dlq_url):
        say("\n".join(queues))
    require_changelog(parts.changelog)  # after the queues: a new deployment's events may be there
    say("\n".join(table_lines(parts)))
    return 0
