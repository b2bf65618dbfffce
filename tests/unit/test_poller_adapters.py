"""The SQS adapter's error translation (one function), and the retries of transient errors:
botocore's, as `lakeinlet.aws` configures them, with none stacked on top."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, EndpointConnectionError, ResponseStreamingError

from lakeinlet.aws import AwsSection, client
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


class FakeSqsHttp:
    """SQS over HTTP, in place of the network (botocore's before-send hook, so botocore's own
    retries run as configured): `fails` answers of error `code` with `status`, then one message."""

    def __init__(self, code: str, status: int, fails: int) -> None:
        self.code, self.status, self.fails, self.calls = code, status, fails, 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.calls += 1
        if self.fails:
            self.fails -= 1
            return _response(request, self.status, {"__type": f"com.amazonaws.sqs#{self.code}",
                                                    "message": f"{self.code} happened"})
        return _response(request, 200, {"Messages": [{
            "MessageId": "m1", "ReceiptHandle": "h1", "Body": "{}",
            "Attributes": {"ApproximateReceiveCount": "3"}}]})


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


def _response(request: Any, status: int, body: dict[str, Any]) -> AWSResponse:
    return AWSResponse(request.url, status, {"Content-Type": "application/x-amz-json-1.0"},
                       _Raw(json.dumps(body).encode()))


def queue_over(fake: FakeSqsHttp, max_attempts: int = 8) -> SqsQueue:
    """The adapter over a real client from `lakeinlet.aws.client` (its retry configuration)."""
    sqs = client("sqs", AwsSection(endpoint_url="http://127.0.0.1:9", max_attempts=max_attempts),
                 aws_access_key_id="testing", aws_secret_access_key="testing")
    sqs.meta.events.register("before-send.sqs.ReceiveMessage", fake)
    return SqsQueue(sqs, "http://127.0.0.1:9/123456789012/q")


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """botocore's pauses between its retries, recorded instead of slept."""
    pauses: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=pauses.append))
    return pauses


def test_transient_errors_are_retried_by_botocore_with_its_sleep(sleeps: list[float]) -> None:
    fake = FakeSqsHttp("ServiceUnavailable", 503, fails=2)
    (msg,) = queue_over(fake).receive(10, 0, 30)
    assert (msg.message_id, msg.receipt_handle, msg.receive_count) == ("m1", "h1", 3)
    assert fake.calls == 3 and len(sleeps) == 2


def test_transient_errors_give_up_after_the_attempts_without_retries_stacked(sleeps: list[float]) -> None:
    fake = FakeSqsHttp("ServiceUnavailable", 503, fails=20)
    with pytest.raises(TransientError, match="ServiceUnavailable"):
        queue_over(fake, max_attempts=2).receive(10, 0, 30)
    assert fake.calls == 3  # botocore's first try and its 2 retries; nothing on top of them


def test_terminal_errors_are_not_retried(sleeps: list[float]) -> None:
    fake = FakeSqsHttp("AccessDenied", 403, fails=5)
    with pytest.raises(TerminalError, match="AccessDenied"):
        queue_over(fake).receive(10, 0, 30)
    assert fake.calls == 1 and sleeps == []
