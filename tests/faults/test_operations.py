"""Naming the operation of a request: S3 REST (path style), SQS JSON and query protocols."""

from __future__ import annotations

import json

import pytest

from chaos.operations import classify

pytestmark = pytest.mark.unit

S3_AUTH = {"Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
                            "SignedHeaders=host, Signature=00"}
SQS_AUTH = {"Authorization": S3_AUTH["Authorization"].replace("/s3/", "/sqs/")}


@pytest.mark.parametrize(("method", "target", "headers", "api"), [
    ("GET", "/", {}, "ListBuckets"),
    ("GET", "/bkt?list-type=2&prefix=a%2F", {}, "ListObjectsV2"),
    ("GET", "/bkt?prefix=a&delimiter=%2F", {}, "ListObjects"),
    ("GET", "/bkt?location", {}, "GetBucketLocation"),
    ("PUT", "/bkt", {}, "CreateBucket"),
    ("PUT", "/bkt?notification", {}, "PutBucketNotification"),
    ("HEAD", "/bkt", {}, "HeadBucket"),
    ("POST", "/bkt?delete", {}, "DeleteObjects"),
    ("GET", "/bkt/a/b.json", {}, "GetObject"),
    ("GET", "/bkt/a/b.json?versionId=3&response-content-type=x", {}, "GetObject"),
    ("HEAD", "/bkt/a/b.json", {}, "HeadObject"),
    ("PUT", "/bkt/a/b.json", {}, "PutObject"),
    ("PUT", "/bkt/a/b.json", {"x-amz-copy-source": "/bkt/c"}, "CopyObject"),
    ("DELETE", "/bkt/a/b.json", {}, "DeleteObject"),
    ("POST", "/bkt/big?uploads", {}, "CreateMultipartUpload"),
    ("PUT", "/bkt/big?partNumber=1&uploadId=u", {}, "UploadPart"),
    ("POST", "/bkt/big?uploadId=u", {}, "CompleteMultipartUpload"),
    ("DELETE", "/bkt/big?uploadId=u", {}, "AbortMultipartUpload"),
    ("PUT", "/bkt/a?tagging", {}, "PutObjectTagging"),
    ("GET", "/bkt/a?x-id=GetObject", {}, "GetObject"),  # boto3 names the operation itself
])
def test_s3_operations_are_named_from_method_path_and_query(
        method: str, target: str, headers: dict[str, str], api: str) -> None:
    op = classify(method, target, S3_AUTH | headers, b"")
    assert (op.service, op.api, op.name) == ("s3", api, api)
    assert op.bucket == ("" if target == "/" else "bkt")


def test_s3_keys_are_percent_decoded_and_form_the_resource() -> None:
    op = classify("GET", "/bkt/dir/a%20b%2Bc.csv", S3_AUTH, b"")
    assert (op.key, op.resource) == ("dir/a b+c.csv", "bkt/dir/a b+c.csv")
    assert classify("GET", "/bkt?list-type=2", S3_AUTH, b"").resource == "bkt"


@pytest.mark.parametrize(("method", "key", "name"), [
    ("PUT", "t/_delta_log/00000000000000000001.json", "DeltaCommit"),
    ("PUT", "t/_delta_log/_last_checkpoint", "DeltaCommit"),
    ("PUT", "t/.hoodie/20260101000000000.commit", "HudiCommit"),
    ("PUT", "t/.hoodie/timeline/20260101000000000_20260101000000001.deltacommit", "HudiCommit"),
    ("PUT", "t/metadata/v3.metadata.json", "IcebergCommit"),
    ("PUT", "t/part-0001.parquet", "PutObject"),
    ("PUT", "t/_delta_log_copy/x.json", "PutObject"),  # the folder must match exactly
    ("GET", "t/_delta_log/00000000000000000001.json", "GetObject"),  # reads are not commits
])
def test_writes_into_a_table_log_folder_are_commits(method: str, key: str, name: str) -> None:
    op = classify(method, f"/lake/{key}", S3_AUTH, b"")
    assert op.name == name
    assert op.names == ((name,) if name == op.api else (name, "PutObject"))


def test_copy_into_an_iceberg_metadata_folder_is_a_commit() -> None:
    op = classify("PUT", "/lake/t/metadata/v2.metadata.json", S3_AUTH | {"x-amz-copy-source": "x"}, b"")
    assert (op.api, op.name) == ("CopyObject", "IcebergCommit")


def test_sqs_json_protocol_takes_operation_from_target_and_queue_from_body() -> None:
    body = json.dumps({"QueueUrl": "http://127.0.0.1:5000/123456789012/events-1", "Entries": []})
    op = classify("POST", "/", SQS_AUTH | {"X-Amz-Target": "AmazonSQS.DeleteMessageBatch"},
                  body.encode())
    assert (op.service, op.api, op.queue, op.resource) == ("sqs", "DeleteMessageBatch", "events-1",
                                                           "events-1")


def test_sqs_query_protocol_takes_action_from_the_form_body() -> None:
    body = b"Action=ReceiveMessage&QueueUrl=http%3A%2F%2Fh%2F123456789012%2Fq1&MaxNumberOfMessages=10"
    op = classify("POST", "/", SQS_AUTH | {"Content-Type": "application/x-www-form-urlencoded"}, body)
    assert (op.service, op.api, op.queue) == ("sqs", "ReceiveMessage", "q1")


def test_service_falls_back_to_sqs_target_or_queue_path_without_a_signature() -> None:
    assert classify("POST", "/", {"X-Amz-Target": "AmazonSQS.SendMessage"}, b"{}").service == "sqs"
    assert classify("GET", "/123456789012/q?Action=GetQueueAttributes", {}, b"").api == (
        "GetQueueAttributes")
    assert classify("GET", "/bkt/k", {}, b"").service == "s3"


def test_presigned_s3_url_is_recognised_by_its_credential_parameter() -> None:
    op = classify("GET", "/bkt/k?X-Amz-Credential=testing%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
                  "&X-Amz-Signature=00", {}, b"")
    assert (op.service, op.api) == ("s3", "GetObject")
