"""`lakeinlet-poll status`: queue depth, in-flight, DLQ depth and the changelog head."""

from __future__ import annotations

import json

from lakeinlet import logs
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.sources.settings import StatusConfig
from lakeinlet.sources.sqs import SqsQueue


def status_report(config: StatusConfig) -> dict[str, object]:
    """The numbers `status` prints, as a dict."""
    queue = SqsQueue.from_config(config.status.queue_url, config.aws)
    depths = queue.depths()
    dlq = queue.dead_letter_queue()
    report: dict[str, object] = {
        "queue_url": queue.queue_url, "visible": depths.visible, "in_flight": depths.in_flight,
        "delayed": depths.delayed, "dlq_arn": depths.dlq_arn,
        "dlq_visible": dlq.depths().visible if dlq else None,
        "max_receive_count": depths.max_receive_count}
    if config.status.changelog:
        changelog = DeltaChangelog(config.status.changelog, config.aws)
        head = changelog.head_version()
        commits = changelog.commits(after=head - 1) if head >= 0 else []
        report |= {"changelog": config.status.changelog, "changelog_version": head,
                   "changelog_time": commits[-1].timestamp.isoformat() if commits else None}
    return report


def status_text(config: StatusConfig) -> str:
    """The report as `key value` lines, or one JSON object with `--log-format json`."""
    logs.setup(config.log.log_format, config.log.log_level)
    report = status_report(config)
    if config.log.log_format == "json":
        return json.dumps(report)
    return "\n".join(f"{k:<18} {'-' if v is None else v}" for k, v in report.items())
