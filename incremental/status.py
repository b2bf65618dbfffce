"""`status`: one screen with queue and DLQ depth, changelog head, checkpoint and lag."""

from __future__ import annotations

from lakeinlet.aws import client
from lakeinlet.incremental import checkpoint as ck
from lakeinlet.incremental.wiring import Parts
from lakeinlet.sources.sqs import SqsQueue


def _depth_line(queue: SqsQueue) -> str:
    d = queue.depths()
    return f"{d.visible} visible, {d.in_flight} in flight"


def status_lines(parts: Parts, queue_url: str | None, dlq_url: str | None) -> list[str]:
    """The status screen as lines (queues only when a URL is given; the DLQ is found from the
    queue's RedrivePolicy when --dlq-url is not given)."""
    lines = []
    if queue_url or dlq_url:
        sqs = client("sqs", parts.config.aws)
        dlq = SqsQueue(sqs, dlq_url) if dlq_url else None
        if queue_url:
            queue = SqsQueue(sqs, queue_url)
            lines.append(f"queue: {_depth_line(queue)}")
            dlq = dlq or queue.dead_letter_queue()
        lines.append(f"dlq:   {_depth_line(dlq)}" if dlq else "dlq:   none (no RedrivePolicy)")
    view = ck.show(parts.target, parts.changelog)
    head = view.pending[-1].timestamp.isoformat(timespec="seconds") if view.pending else "-"
    lines += [f"changelog: {parts.changelog.uri} head version {view.head} (newest pending commit {head})",
              f"target:    {parts.target.uri}", *view.lines()[0:1], *view.lines()[2:3]]
    return lines
