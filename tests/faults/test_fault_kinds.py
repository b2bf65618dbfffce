"""Each fault kind as a boto3 client sees it: the right error code, or a transparent retry."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError, ResponseStreamingError

from chaos import FaultPlan, FaultProxy, FaultRule
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.faults.conftest import aws_client

pytestmark = pytest.mark.integration
BODY = b"0123456789" * 100


@pytest.fixture
def bucket(moto_server: MotoServer) -> str:
    """A bucket holding `k` (BODY), made directly on the emulator."""
    name = unique("kinds")
    s3 = aws_client("s3", moto_server.endpoint)
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="k", Body=BODY)
    return name


@pytest.fixture
def queue(moto_server: MotoServer) -> str:
    """A queue holding one message, made directly on the emulator."""
    sqs = aws_client("sqs", moto_server.endpoint)
    url: str = sqs.create_queue(QueueName=unique("kinds"))["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="m")
    return url.rpartition("/")[2]


def first(operation: str, fault: str, **options: Any) -> FaultPlan:
    return FaultPlan((FaultRule(operation, fault, nth=(1,), **options),))


def client_error(call: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as err:
        call()
    return err.value.response["ResponseMetadata"]["HTTPStatusCode"], err.value.response["Error"]["Code"]


@pytest.mark.parametrize(("fault", "status", "code"), [
    ("http_500", 500, "InternalError"), ("slow_down_503", 503, "SlowDown"),
    ("throttle", 503, "SlowDown"), ("error_after", 500, "InternalError")])
def test_s3_error_faults_surface_with_s3_codes_without_retries(
        proxy: FaultProxy, bucket: str, fault: str, status: int, code: str) -> None:
    proxy.set_plan(first("GetObject", fault))
    s3 = aws_client("s3", proxy.endpoint, attempts=1)
    assert client_error(lambda: s3.get_object(Bucket=bucket, Key="k")) == (status, code)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == BODY  # only the 1st was faulted


def test_head_object_error_has_no_body_and_botocore_names_it_by_status(
        proxy: FaultProxy, bucket: str) -> None:
    proxy.set_plan(first("HeadObject", "slow_down_503"))
    s3 = aws_client("s3", proxy.endpoint, attempts=1)
    assert client_error(lambda: s3.head_object(Bucket=bucket, Key="k")) == (503, "503")
    assert s3.head_object(Bucket=bucket, Key="k")["ContentLength"] == len(BODY)  # connection intact


@pytest.mark.parametrize(("fault", "status", "code"), [
    ("throttle", 400, "RequestThrottled"), ("http_500", 500, "InternalFailure"),
    ("slow_down_503", 503, "ServiceUnavailable")])
def test_sqs_error_faults_surface_with_sqs_codes_without_retries(
        proxy: FaultProxy, queue: str, fault: str, status: int, code: str) -> None:
    proxy.set_plan(first("ReceiveMessage", fault))
    sqs = aws_client("sqs", proxy.endpoint, attempts=1)
    url = f"{proxy.endpoint}/123456789012/{queue}"
    assert client_error(lambda: sqs.receive_message(QueueUrl=url)) == (status, code)


@pytest.mark.parametrize("fault", ["slow_down_503", "throttle", "http_500", "reset_before"])
def test_one_fault_is_retried_transparently_when_retries_are_on(
        proxy: FaultProxy, bucket: str, queue: str, fault: str) -> None:
    proxy.set_plan(FaultPlan((FaultRule("GetObject", fault, nth=(1,)),
                              FaultRule("ReceiveMessage", fault, nth=(1,)))))
    s3, sqs = aws_client("s3", proxy.endpoint, 3), aws_client("sqs", proxy.endpoint, 3)
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == BODY and got["ResponseMetadata"]["RetryAttempts"] == 1
    received = sqs.receive_message(QueueUrl=f"{proxy.endpoint}/123456789012/{queue}")
    assert [m["Body"] for m in received["Messages"]] == ["m"]
    assert proxy.stats()["faults"] == {f"GetObject/{fault}": 1, f"ReceiveMessage/{fault}": 1}


def test_reset_before_never_reaches_the_emulator(proxy: FaultProxy, bucket: str,
                                                 moto_server: MotoServer) -> None:
    proxy.set_plan(first("PutObject", "reset_before"))
    with pytest.raises(ConnectionClosedError):
        aws_client("s3", proxy.endpoint, 1).put_object(Bucket=bucket, Key="new", Body=b"x")
    keys = [o["Key"] for o in aws_client("s3", moto_server.endpoint).list_objects_v2(
        Bucket=bucket)["Contents"]]
    assert keys == ["k"]
    assert [(r.fault, r.forwarded, r.applied) for r in proxy.faults()] == [("reset_before", False, False)]


@pytest.mark.parametrize("keep", [0, 100])
def test_truncated_object_body_fails_while_reading_it(proxy: FaultProxy, bucket: str, keep: int) -> None:
    proxy.set_plan(first("GetObject", "truncate", keep_bytes=keep))
    answer = aws_client("s3", proxy.endpoint, 1).get_object(Bucket=bucket, Key="k")
    assert answer["ContentLength"] == len(BODY)  # the headers promised the whole body
    with pytest.raises(ResponseStreamingError,
                       match=rf"IncompleteRead\({keep} bytes read, {len(BODY) - keep} more"):
        answer["Body"].read()


def test_truncated_listing_is_reported_by_botocore_as_a_500(proxy: FaultProxy, bucket: str) -> None:
    """botocore turns an S3 200 whose XML cannot be parsed into a (retryable) 500."""
    proxy.set_plan(first("ListObjectsV2", "truncate"))
    s3 = aws_client("s3", proxy.endpoint, attempts=1)
    assert client_error(lambda: s3.list_objects_v2(Bucket=bucket)) == (500, "500")
    assert aws_client("s3", proxy.endpoint, 2).list_objects_v2(Bucket=bucket)["KeyCount"] == 1


def test_latency_holds_the_answer_back_after_the_emulator_applied_it(
        proxy: FaultProxy, bucket: str, moto_server: MotoServer) -> None:
    proxy.set_plan(first("PutObject", "latency", latency_ms=1500))
    s3, direct = aws_client("s3", proxy.endpoint, 1), aws_client("s3", moto_server.endpoint)
    put = threading.Thread(target=lambda: s3.put_object(Bucket=bucket, Key="slow", Body=b"x"))
    started = time.monotonic()
    put.start()
    while direct.list_objects_v2(Bucket=bucket, Prefix="slow")["KeyCount"] == 0:
        assert put.is_alive(), "the client got its answer before the object existed"
        time.sleep(0.05)
    assert put.is_alive()  # the object exists while the client still waits for the answer
    other = aws_client("s3", proxy.endpoint, 1).head_object(Bucket=bucket, Key="slow")
    assert other["ContentLength"] == 1 and put.is_alive()  # a held answer does not hold others
    put.join()
    assert time.monotonic() - started >= 1.5
    assert [(r.fault, r.applied) for r in proxy.faults()] == [("latency", True)]
