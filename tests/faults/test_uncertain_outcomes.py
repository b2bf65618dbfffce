"""Uncertain outcomes: the emulator APPLIES the request, the client sees a failure anyway."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, ConnectionClosedError

from chaos import FaultPlan, FaultProxy, FaultRule
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.faults.conftest import aws_client

pytestmark = pytest.mark.integration


def test_put_object_reset_after_leaves_the_object_although_the_client_saw_a_reset(
        proxy: FaultProxy, moto_server: MotoServer) -> None:
    bucket, direct = unique("unsure"), aws_client("s3", moto_server.endpoint)
    direct.create_bucket(Bucket=bucket)
    proxy.set_plan(FaultPlan((FaultRule("PutObject", "reset_after", nth=(1,)),)))
    with pytest.raises(ConnectionClosedError):
        aws_client("s3", proxy.endpoint, 1).put_object(Bucket=bucket, Key="a/1.json", Body=b"{}")
    assert direct.get_object(Bucket=bucket, Key="a/1.json")["Body"].read() == b"{}"
    [record] = proxy.faults()
    assert (record.operation, record.bucket, record.key, record.fault) == (
        "PutObject", bucket, "a/1.json", "reset_after")
    assert (record.forwarded, record.upstream_status, record.applied) == (True, 200, True)


def test_delete_message_batch_error_after_deletes_although_the_client_saw_a_500(
        proxy: FaultProxy, moto_server: MotoServer) -> None:
    direct = aws_client("sqs", moto_server.endpoint)
    url = direct.create_queue(QueueName=unique("unsure"))["QueueUrl"]
    direct.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": str(i)}
                                                     for i in range(3)])
    sqs = aws_client("sqs", proxy.endpoint, 1)
    via_proxy = url.replace(moto_server.endpoint, proxy.endpoint)
    got = sqs.receive_message(QueueUrl=via_proxy, MaxNumberOfMessages=10, VisibilityTimeout=60)
    entries = [{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in got["Messages"]]
    proxy.set_plan(FaultPlan((FaultRule("DeleteMessageBatch", "error_after", nth=(1,)),)))
    with pytest.raises(ClientError) as err:
        sqs.delete_message_batch(QueueUrl=via_proxy, Entries=entries)
    assert err.value.response["Error"]["Code"] == "InternalFailure"
    attrs = direct.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert len(entries) == 3
    assert (attrs["ApproximateNumberOfMessages"], attrs["ApproximateNumberOfMessagesNotVisible"]) == (
        "0", "0")  # gone, not merely in flight for 60 s
    [record] = proxy.faults()
    assert (record.operation, record.queue, record.applied) == (
        "DeleteMessageBatch", url.rpartition("/")[2], True)
