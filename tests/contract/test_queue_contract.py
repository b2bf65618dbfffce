"""One suite over the in-memory queue and the SQS adapter (against moto): same behaviour."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.queue_settings import QueueSettings
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.ports import DeadLetterQueue, Message, MessageAttribute, Queue
from lakeinlet.sources.sqs import SqsQueue
from tests.conftest import unique

pytestmark = pytest.mark.contract

MAX_RECEIVES = 2


@dataclass
class Harness:
    queue: Queue
    send: Callable[[Sequence[str]], list[str]]
    dlq_visible: Callable[[], int]
    sink: DeadLetterQueue


def _memory() -> Harness:
    dlq = InMemoryQueue(name="dlq")
    queue = InMemoryQueue(max_receive_count=MAX_RECEIVES, dlq=dlq)
    return Harness(queue, queue.send_batch, lambda: dlq.depths().visible, queue)


def _sqs(aws: AwsSection) -> Harness:
    sqs, name = client("sqs", aws), unique("contract")
    settings = QueueSettings(visibility_timeout_seconds=1, receive_wait_time_seconds=0,
                             max_receive_count=MAX_RECEIVES)
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    attrs = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])
    dlq_arn = attrs["Attributes"]["QueueArn"]
    url = sqs.create_queue(QueueName=name, Attributes=settings.queue_attributes() | {
        "RedrivePolicy": settings.redrive_policy(dlq_arn)})["QueueUrl"]
    queue, dlq = SqsQueue(sqs, url), SqsQueue(sqs, dlq_url)
    return Harness(queue, queue.send_batch, lambda: dlq.depths().visible, queue)


@pytest.fixture(params=["memory", "sqs"])
def h(request: pytest.FixtureRequest) -> Harness:
    return _memory() if request.param == "memory" else _sqs(request.getfixturevalue("aws"))


def _drain(q: Queue, visibility: int = 30) -> list[str]:
    got: list[str] = []
    while batch := q.receive(10, 0, visibility):
        got += [m.body for m in batch]
    return got


def test_receive_returns_what_was_sent_at_most_ten_a_call(h: Harness) -> None:
    bodies = [f'{{"n": {i}, "text": "é +%2B"}}' for i in range(15)]
    h.send(bodies)
    first = h.queue.receive(10, 1, 30)
    assert 1 <= len(first) <= 10
    assert all(m.receive_count == 1 for m in first)
    rest = _drain(h.queue)
    assert sorted([m.body for m in first] + rest) == sorted(bodies)


def test_long_poll_waits_then_returns_empty(h: Harness) -> None:
    started = time.monotonic()
    assert h.queue.receive(10, 1, 30) == []
    assert time.monotonic() - started >= 0.8


def test_long_poll_returns_a_message_sent_during_the_wait(h: Harness) -> None:
    timer = threading.Timer(0.5, lambda: h.send(['{"late": true}']))
    timer.start()
    started = time.monotonic()
    got = h.queue.receive(10, 5, 30)
    timer.join()
    assert [m.body for m in got] == ['{"late": true}']
    assert time.monotonic() - started < 4.5


def test_visibility_timeout_hides_then_redelivers(h: Harness) -> None:
    h.send(["one"])
    (first,) = h.queue.receive(10, 0, 1)
    assert h.queue.receive(10, 0, 1) == []
    time.sleep(1.3)
    (again,) = h.queue.receive(10, 1, 30)
    assert again.message_id == first.message_id and again.receive_count == 2
    assert again.receipt_handle != first.receipt_handle


def test_change_visibility_extends_and_releases(h: Harness) -> None:
    h.send(["a", "b"])
    got = h.queue.receive(10, 1, 1)
    while len(got) < 2:
        got += h.queue.receive(10, 1, 1)
    a, b = sorted(got, key=lambda m: m.body)
    assert h.queue.change_visibility([a.receipt_handle], 30) == []
    assert h.queue.change_visibility([b.receipt_handle], 0) == []
    time.sleep(1.3)
    assert [m.body for m in h.queue.receive(10, 1, 30)] == ["b"]  # a is still hidden


def test_change_visibility_reports_an_invalid_handle(h: Harness) -> None:
    (failure,) = h.queue.change_visibility(["not-a-receipt-handle"], 5)
    assert failure.receipt_handle == "not-a-receipt-handle" and failure.sender_fault
    assert failure.code == "ReceiptHandleIsInvalid"


def test_batch_delete_with_one_failed_entry(h: Harness) -> None:
    h.send(["keep-going"])
    (msg,) = h.queue.receive(10, 1, 30)
    failures = h.queue.delete([msg.receipt_handle, "garbage-handle"])
    assert [(f.receipt_handle, f.code, f.sender_fault) for f in failures] == [
        ("garbage-handle", "ReceiptHandleIsInvalid", True)]
    depths = h.queue.depths()
    assert (depths.visible, depths.in_flight) == (0, 0)


def test_depths_count_visible_and_in_flight(h: Harness) -> None:
    h.send([f"m{i}" for i in range(5)])
    got = h.queue.receive(2, 1, 30)
    depths = h.queue.depths()
    assert (depths.visible, depths.in_flight) == (5 - len(got), len(got))
    assert depths.dlq_arn and depths.max_receive_count == MAX_RECEIVES


def test_redrive_moves_a_message_to_the_dlq_after_max_receives(h: Harness) -> None:
    h.send(["poison"])
    for _ in range(MAX_RECEIVES):
        assert [m.body for m in h.queue.receive(10, 1, 1)] == ["poison"]
        time.sleep(1.2)
    assert h.queue.receive(10, 1, 1) == []
    assert h.dlq_visible() == 1
    assert h.queue.depths().visible == 0


def test_send_keeps_the_body_and_message_attributes(h: Harness) -> None:
    attrs = {"origin": MessageAttribute("String", "uploader é"), "n": MessageAttribute("Number", "42"),
             "blob": MessageAttribute("Binary", binary_value=b"\x00\xff"),
             "typed": MessageAttribute("String.custom", "x")}
    body = '{"Records": "truncated é +%2B'
    assert h.sink.send([Message("m-1", "h-1", body, attributes=attrs)]) == []
    (got,) = h.queue.receive(10, 1, 30)
    assert got.body == body, f"expected the body unchanged, found {got.body!r}"
    assert dict(got.attributes) == attrs, f"expected {attrs}, found {got.attributes}"
    assert got.message_id != "m-1"  # a new message
