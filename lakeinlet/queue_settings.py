"""The queue settings lakeinlet expects: one source of truth for local provisioning and Terraform
(`infra/terraform` declares the same defaults; a test fails when the two drift)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class QueueSettings:
    """Settings of the event queue and its dead-letter queue."""

    visibility_timeout_seconds: int = 300
    """Must exceed the time to commit one poll batch, or messages come back and are read twice
    (the changelog dedups them by event id, but the work is repeated)."""
    receive_wait_time_seconds: int = 20
    """Long polling on by default: fewer empty receives, lower cost."""
    message_retention_seconds: int = 345_600
    """Four days: how long an event waits for the event source before S3's message is lost."""
    max_receive_count: int = 5
    """Receives before a message that keeps failing (a poison message) moves to the DLQ."""
    dlq_message_retention_seconds: int = 1_209_600
    """Fourteen days, the SQS maximum, so operators have time to inspect dead letters."""
    sqs_managed_sse: bool = True
    """Server-side encryption with SQS-owned keys."""

    def queue_attributes(self) -> dict[str, str]:
        """SQS CreateQueue attributes of the event queue (without the redrive policy)."""
        return {
            "VisibilityTimeout": str(self.visibility_timeout_seconds),
            "ReceiveMessageWaitTimeSeconds": str(self.receive_wait_time_seconds),
            "MessageRetentionPeriod": str(self.message_retention_seconds),
            "SqsManagedSseEnabled": str(self.sqs_managed_sse).lower(),
        }

    def redrive_policy(self, dlq_arn: str) -> str:
        return json.dumps({"deadLetterTargetArn": dlq_arn,
                           "maxReceiveCount": str(self.max_receive_count)})

    def as_dict(self) -> dict[str, int | bool]:
        return asdict(self)


DEFAULT_QUEUE_SETTINGS = QueueSettings()
