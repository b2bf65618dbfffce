"""The SQS adapter's error translation (one function) and its retries of transient errors."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ResponseStreamingError

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.queues import translate
from lakeinlet.sources.sqs import SqsQueue

pytestmark = pytest.mark.unit


def client_error(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"{code} happened"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "ReceiveMessage")


@pytest.mark.parametrize(("exc", "kind"), [
    (client_error("AWS.SimpleQueueService.NonExistentQueue", 400), TerminalError),
    (client_error("AccessDenied", 403), TerminalError),
    (client_error("InvalidParameterValue", 400), TerminalError),
    (client_error("ServiceUnavailable", 503), TransientError),
    (client_error("InternalError", 500), TransientError),
    (client_error("RequestThrottled", 400), TransientError),
    (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), TransientError),
    (ResponseStreamingError(error="IncompleteRead(16 bytes read, 1009 more expected)"), TransientError),
])
def test_translate(exc: Exception, kind: type) -> None:
    err = translate(exc, "receive_message", "http://q")
    assert type(err) is kind
    assert "receive_message" in str(err) and "http://q" in str(err)


class FakeSqs:
    """Fails `fails` times with `error`, then answers with one message."""

    def __init__(self, error: Exception, fails: int) -> None:
        self.error, self.fails, self.calls = error, fails, 0

    def receive_message(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.fails:
            self.fails -= 1
            raise self.error
        return {"Messages": [{"MessageId": "m1", "ReceiptHandle": "h1", "Body": "{}",
                              "Attributes": {"ApproximateReceiveCount": "3"}}]}


def test_transient_errors_are_retried_with_the_injected_sleep() -> None:
    sleeps: list[float] = []
    fake = FakeSqs(client_error("ServiceUnavailable", 503), fails=2)
    (msg,) = SqsQueue(fake, "http://q", sleep=sleeps.append).receive(10, 0, 30)
    assert (msg.message_id, msg.receipt_handle, msg.receive_count) == ("m1", "h1", 3)
    assert fake.calls == 3 and len(sleeps) == 2


def test_transient_errors_give_up_after_the_attempts() -> None:
    fake = FakeSqs(client_error("ServiceUnavailable", 503), fails=5)
    with pytest.raises(TransientError):
        SqsQueue(fake, "http://q", sleep=lambda s: None, attempts=3).receive(10, 0, 30)
    assert fake.calls == 3


def test_terminal_errors_are_not_retried() -> None:
    fake = FakeSqs(client_error("AccessDenied", 403), fails=5)
    with pytest.raises(TerminalError, match="AccessDenied"):
        SqsQueue(fake, "http://q", sleep=lambda s: None).receive(10, 0, 30)
    assert fake.calls == 1
