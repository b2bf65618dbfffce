"""Without faults the proxy is transparent to boto3's S3 and SQS clients, counts operations and
holds each request the delay it is given, without holding the others."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

from chaos import FaultPlan, FaultProxy
from tests.conftest import unique
from tests.faults.conftest import aws_client

pytestmark = pytest.mark.integration


def test_s3_put_get_head_list_delete_through_the_proxy(proxy: FaultProxy) -> None:
    s3, bucket = aws_client("s3", proxy.endpoint), unique("pass")
    s3.create_bucket(Bucket=bucket)
    body = bytes(range(256)) * 64  # 16 KiB, every byte value
    s3.put_object(Bucket=bucket, Key="dir/a b+c.bin", Body=body)
    assert s3.get_object(Bucket=bucket, Key="dir/a b+c.bin")["Body"].read() == body
    assert s3.head_object(Bucket=bucket, Key="dir/a b+c.bin")["ContentLength"] == len(body)
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="dir/")["Contents"]
    assert [o["Key"] for o in listed] == ["dir/a b+c.bin"]
    s3.delete_object(Bucket=bucket, Key="dir/a b+c.bin")
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    assert proxy.stats()["requests"] == {"CreateBucket": 1, "PutObject": 1, "GetObject": 1,
                                         "HeadObject": 1, "ListObjectsV2": 2, "DeleteObject": 1}


def test_sqs_send_receive_delete_batch_through_the_proxy(proxy: FaultProxy) -> None:
    sqs = aws_client("sqs", proxy.endpoint)
    url = sqs.create_queue(QueueName=unique("pass"))["QueueUrl"]
    assert url.startswith(proxy.endpoint)  # the emulator saw the client's Host: URLs keep the proxy
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": f"m{i}"}
                                                  for i in range(3)])
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)["Messages"]
    assert sorted(m["Body"] for m in got) == ["m0", "m1", "m2"]
    deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[
        {"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in got])
    assert len(deleted["Successful"]) == 3 and not deleted.get("Failed")
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert (attrs["ApproximateNumberOfMessages"], attrs["ApproximateNumberOfMessagesNotVisible"]) == (
        "0", "0")
    assert proxy.stats()["requests"]["DeleteMessageBatch"] == 1


def test_control_endpoint_is_answered_by_the_proxy_not_the_emulator(proxy: FaultProxy) -> None:
    stats = proxy.stats()
    assert stats["requests"] == {} and stats["generation"] >= 1
    with pytest.raises(urllib.error.HTTPError) as err:
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no HTTP_PROXY
        direct.open(f"{proxy.endpoint}/__faults__/nonsense", timeout=5)
    assert err.value.code == 404 and b"unknown control" in err.value.read()
    assert proxy.stats()["requests"] == {}  # control calls are never counted nor forwarded


def test_delay_holds_every_request_without_holding_the_others(proxy: FaultProxy) -> None:
    """A delayed request does not wait for another one's delay: all four are in flight at once."""
    sqs = aws_client("sqs", proxy.endpoint)
    url = sqs.create_queue(QueueName=unique("delay"))["QueueUrl"]
    proxy.set_plan(FaultPlan(), seed=0)  # restarts the in-flight counters
    proxy.set_delay(1000)
    try:
        start = threading.Barrier(4)

        def depth() -> float:
            start.wait()
            began = time.monotonic()
            sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
            return time.monotonic() - began

        with ThreadPoolExecutor(4) as pool:
            took = list(pool.map(lambda _: depth(), range(4)))
        stats = proxy.stats()
    finally:
        proxy.set_delay(0)
    assert min(took) >= 1.0 and stats["delay_ms"] == 1000
    assert (stats["in_flight_max"], stats["in_flight"]) == (4, 0)
    assert stats["in_flight_seconds"] >= 4.0  # each of the four was held at least its second
    assert proxy.stats()["delay_ms"] == 0
