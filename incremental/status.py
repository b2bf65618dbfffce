"""`status`: one screen with queue and DLQ depth, changelog head, checkpoint and lag."""

from __future__ import annotations

from typing import Any

from lakeinlet.aws import client
from lakeinlet.incremental import checkpoint as ck
from lakeinlet.incremental.wiring import Parts

DEPTH = ("ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")


def queue_depth(sqs: Any, url: str) -> str:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(DEPTH))["Attributes"]
    return f"{attrs.get(DEPTH[0], '?')} visible, {attrs.get(DEPTH[1], '?')} in flight"


def status_lines(parts: Parts, queue_url: str | None, dlq_url: str | None) -> list[str]:
    """The status screen as lines (queues only when their URLs are given)."""
    lines = []
    if queue_url or dlq_url:
        sqs = client("sqs", parts.config.aws)
        if queue_url:
            lines.append(f"queue: {queue_depth(sqs, queue_url)}")
        if dlq_url:
            lines.append(f"dlq:   {queue_depth(sqs, dlq_url)}")
    view = ck.show(parts.target, parts.changelog)
    head = view.pending[-1].timestamp.isoformat(timespec="seconds") if view.pending else "-"
    lines += [f"changelog: {parts.changelog.uri} head version {view.head} (newest pending commit {head})",
              f"target:    {parts.target.uri}", *view.lines()[0:1], *view.lines()[2:3]]
    return lines
