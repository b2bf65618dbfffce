"""The SQS adapter of the queue port: the only module that talks to SQS through boto3.

botocore retries throttling, 5xx and dropped connections itself (adaptive mode, see
`lakeinlet.aws`), so each call here is made once; `translate` is the one place SDK errors become
TransientError or TerminalError. Nothing here retries again: the poller's receive loop is the one
outer retry of `receive`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import TerminalError
from lakeinlet.queues import QueueDepths, depths_from, queue_url_of, translate
from lakeinlet.sources.ports import EntryFailure, Message, MessageAttribute


class SqsQueue:
    """The queue at `queue_url`, through a ready boto3 SQS client (thread-safe, shared)."""

    def __init__(self, sqs: Any, queue_url: str) -> None:
        self._sqs, self.queue_url = sqs, queue_url

    @classmethod
    def from_config(cls, queue_url: str, aws: AwsSection) -> SqsQueue:
        return cls(client("sqs", aws, max_pool_connections=64), queue_url)

    def _call(self, action: str, **kwargs: Any) -> Any:
        """One boto3 call (botocore retries it as configured), its errors translated."""
        try:
            return getattr(self._sqs, action)(QueueUrl=self.queue_url, **kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise translate(exc, action, self.queue_url) from exc

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        resp = self._call("receive_message", MaxNumberOfMessages=max_messages,
                          WaitTimeSeconds=wait_seconds, VisibilityTimeout=visibility_timeout,
                          MessageSystemAttributeNames=["ApproximateReceiveCount"],
                          MessageAttributeNames=["All"])
        return [Message(m["MessageId"], m["ReceiptHandle"], m["Body"],
                        int(m.get("Attributes", {}).get("ApproximateReceiveCount", 1)),
                        {k: _attribute(v) for k, v in m.get("MessageAttributes", {}).items()})
                for m in resp.get("Messages", [])]

    def send(self, messages: Sequence[Message]) -> list[EntryFailure]:
        """Send up to 10 messages as new ones (body and message attributes); per-entry failures
        are keyed by the given messages' receipt handles."""
        if not messages:
            return []
        entries = [{"Id": str(i), "MessageBody": m.body,
                    "MessageAttributes": {k: _attribute_entry(v) for k, v in m.attributes.items()}}
                   for i, m in enumerate(messages)]
        resp = self._call("send_message_batch", Entries=entries)
        return _failures(resp, [m.receipt_handle for m in messages])

    def change_visibility(self, receipt_handles: Sequence[str], timeout: int) -> list[EntryFailure]:
        if not receipt_handles:
            return []
        entries = [{"Id": str(i), "ReceiptHandle": h, "VisibilityTimeout": timeout}
                   for i, h in enumerate(receipt_handles)]
        resp = self._call("change_message_visibility_batch", Entries=entries)
        return _failures(resp, receipt_handles)

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        if not receipt_handles:
            return []
        entries = [{"Id": str(i), "ReceiptHandle": h} for i, h in enumerate(receipt_handles)]
        return _failures(self._call("delete_message_batch", Entries=entries), receipt_handles)

    def depths(self) -> QueueDepths:
        return depths_from(self._call("get_queue_attributes", AttributeNames=["All"])["Attributes"])

    def dead_letter_queue(self) -> SqsQueue | None:
        """The queue named by this queue's RedrivePolicy, or None when there is none."""
        arn = self.depths().dlq_arn
        if not arn:
            return None
        return SqsQueue(self._sqs, queue_url_of(self._sqs, arn))

    def send_batch(self, bodies: Sequence[str]) -> list[str]:
        """Send messages, 10 per call (tests and benchmarks); returns their ids."""
        ids: list[str] = []
        for start in range(0, len(bodies), 10):
            entries = [{"Id": str(i), "MessageBody": b} for i, b in enumerate(bodies[start:start + 10])]
            resp = self._call("send_message_batch", Entries=entries)
            if resp.get("Failed"):
                raise TerminalError(f"SQS send_message_batch on {self.queue_url}: {resp['Failed']}")
            ids.extend(s["MessageId"] for s in resp.get("Successful", []))
        return ids


def _attribute(raw: dict[str, Any]) -> MessageAttribute:
    return MessageAttribute(str(raw["DataType"]), raw.get("StringValue"), raw.get("BinaryValue"))


def _attribute_entry(attr: MessageAttribute) -> dict[str, Any]:
    value = ({"BinaryValue": attr.binary_value} if attr.binary_value is not None
             else {"StringValue": attr.string_value or ""})
    return {"DataType": attr.data_type} | value


def _failures(resp: dict[str, Any], handles: Sequence[str]) -> list[EntryFailure]:
    return [EntryFailure(handles[int(f["Id"])], str(f.get("Code", "")), str(f.get("Message", "")),
                         bool(f.get("SenderFault", False))) for f in resp.get("Failed", [])]
