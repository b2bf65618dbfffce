"""`lakeinlet-poll status`: queue depth, in-flight, DLQ depth and the changelog head, as `key value`
lines or one JSON object whose keys `FIELDS` declares (the reference page is generated from it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from lakeinlet import logs
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.sources.settings import StatusConfig
from lakeinlet.sources.sqs import SqsQueue

FIELDS: tuple[tuple[str, str, str], ...] = (
    ("queue_url", "string", "the queue reported on (`--queue-url`)"),
    ("visible", "integer", "messages waiting to be received (ApproximateNumberOfMessages)"),
    ("in_flight", "integer", "messages received and not yet deleted (a poller's batch, or a crashed "
     "one's until the visibility timeout)"),
    ("delayed", "integer", "messages not yet deliverable (a delivery delay)"),
    ("dlq_arn", "string or null", "the dead-letter queue of the RedrivePolicy (null: none)"),
    ("dlq_visible", "integer or null", "messages in that dead-letter queue"),
    ("max_receive_count", "integer or null", "receives before SQS moves a message to the DLQ"),
    ("changelog", "string or null", "`--changelog`, when given"),
    ("changelog_version", "integer or null", "its newest version (-1: empty; null: not given)"),
    ("changelog_time", "string or null", "ISO time of that version's commit"),
    ("changelog_age_seconds", "number or null", "now − `changelog_time`: how long ago the poller "
     "last committed a batch"),
)
"""(name, JSON type, meaning) of every key of the report, in the order it is printed."""


def status_report(config: StatusConfig, now: datetime | None = None) -> dict[str, object]:
    """The numbers `status` prints: every key of `FIELDS`, None where unknown."""
    queue = SqsQueue.from_config(config.status.queue_url, config.aws)
    depths = queue.depths()
    dlq = queue.dead_letter_queue()
    report: dict[str, object] = {
        "queue_url": queue.queue_url, "visible": depths.visible, "in_flight": depths.in_flight,
        "delayed": depths.delayed, "dlq_arn": depths.dlq_arn,
        "dlq_visible": dlq.depths().visible if dlq else None,
        "max_receive_count": depths.max_receive_count}
    return report | changelog_report(config, now or datetime.now(UTC))


def changelog_report(config: StatusConfig, now: datetime) -> dict[str, object]:
    """The changelog's head, its commit time and age (None each without --changelog)."""
    uri = config.status.changelog
    head, at = None, None
    if uri:
        changelog = DeltaChangelog(uri, config.aws)
        head = changelog.head_version()
        commits = changelog.commits(after=head - 1) if head >= 0 else []
        at = commits[-1].timestamp if commits else None
    return {"changelog": uri, "changelog_version": head, "changelog_time": at.isoformat() if at else None,
            "changelog_age_seconds": (now - at).total_seconds() if at else None}


def status_text(config: StatusConfig) -> str:
    """The report as `key value` lines, or one JSON object with --json or --log-format json."""
    logs.setup(config.log.log_format, config.log.log_level)
    report = status_report(config)
    if config.status.json or config.log.log_format == "json":
        return json.dumps(report)
    return "\n".join(f"{k:<21} {'-' if v is None else v}" for k, v in report.items())
