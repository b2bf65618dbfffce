"""SQS as both jobs see it: one translation of SDK errors, and the queue depths and dead-letter
queue read from a queue's attributes (the poller's adapter and the loader's `status` use both)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, HTTPClientError, ReadTimeoutError

from lakeinlet.errors import LakeinletError, TerminalError, TransientError

TRANSIENT_CODES = {"ServiceUnavailable", "InternalError", "InternalFailure", "RequestThrottled",
                   "ThrottlingException", "KmsThrottled", "OverLimit",
                   "AWS.SimpleQueueService.ServiceUnavailable"}


@dataclass(frozen=True)
class QueueDepths:
    """Approximate queue counts, and where its dead letters go (from the RedrivePolicy)."""

    visible: int
    in_flight: int
    delayed: int = 0
    dlq_arn: str | None = None
    max_receive_count: int | None = None

    def line(self) -> str:
        return f"{self.visible} visible, {self.in_flight} in flight"


def translate(exc: Exception, action: str, queue_url: str) -> LakeinletError:
    """Map a botocore error to TransientError (retry may help) or TerminalError (it will not)."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code, status = str(err.get("Code", "")), exc.response.get("ResponseMetadata", {}).get(
            "HTTPStatusCode", 0)
        text = f"SQS {action} on {queue_url}: {code}: {err.get('Message', '')}"
        if code in TRANSIENT_CODES or int(status or 0) >= 500:
            return TransientError(text)
        return TerminalError(text)
    if isinstance(exc, ConnectionError | ReadTimeoutError | HTTPClientError):  # incl. a body cut short
        return TransientError(f"SQS {action} on {queue_url}: {exc}")
    return TerminalError(f"SQS {action} on {queue_url}: {exc}")


def depths_from(attrs: dict[str, Any]) -> QueueDepths:
    """The depths in a GetQueueAttributes answer (`AttributeNames=["All"]`)."""
    redrive = json.loads(attrs.get("RedrivePolicy") or "{}")
    max_receive = redrive.get("maxReceiveCount")
    return QueueDepths(int(attrs.get("ApproximateNumberOfMessages", 0)),
                       int(attrs.get("ApproximateNumberOfMessagesNotVisible", 0)),
                       int(attrs.get("ApproximateNumberOfMessagesDelayed", 0)),
                       redrive.get("deadLetterTargetArn"),
                       None if max_receive is None else int(max_receive))


def read_depths(sqs: Any, queue_url: str) -> QueueDepths:
    """One GetQueueAttributes call (errors translated)."""
    try:
        return depths_from(sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"])
    except (ClientError, BotoCoreError) as exc:
        raise translate(exc, "get_queue_attributes", queue_url) from exc


def queue_url_of(sqs: Any, arn: str) -> str:
    """The URL of the queue an ARN names (a RedrivePolicy names its DLQ by ARN)."""
    _, _, _, _, account, name = arn.split(":", 5)
    try:
        return str(sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"])
    except (ClientError, BotoCoreError) as exc:
        raise translate(exc, "get_queue_url", arn) from exc
