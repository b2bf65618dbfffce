"""Name the AWS operation an HTTP request carries (S3 REST, SQS JSON or query protocol). Standard
library only: the mitmproxy addon, in its own virtualenv without lakeinlet, loads this file by path."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

# Query parameters of a bucket listing; any other parameter names a sub-resource (?location).
_LIST_PARAMS = {"prefix", "delimiter", "marker", "max-keys", "encoding-type", "list-type",
                "continuation-token", "start-after", "fetch-owner", "x-id"}
# Query parameters that do not change an object operation (versions, response overrides).
_OBJECT_PARAMS = {"versionId", "partNumber", "uploadId", "x-id"}
_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/]+/([^/]+)/aws4_request")
_QUEUE_PATH = re.compile(r"^/\d{12}/[^/]+$")
_COMMIT_WRITES = ("PutObject", "CopyObject")


@dataclass(frozen=True)
class Operation:
    """What a request does: service, API name, the name a plan matches, and its target."""

    service: str  # "s3", "sqs", or another signing name (sns, sts)
    api: str  # the AWS API name: PutObject, ReceiveMessage
    name: str  # api, or DeltaCommit/HudiCommit/IcebergCommit for commit writes
    bucket: str = ""
    key: str = ""
    queue: str = ""

    @property
    def resource(self) -> str:
        """`bucket/key` for S3 (`bucket` for bucket calls), the queue name for SQS."""
        if self.service == "s3":
            return f"{self.bucket}/{self.key}" if self.key else self.bucket
        return self.queue

    @property
    def names(self) -> tuple[str, ...]:
        """The names a plan rule may use: the classified name first, then the API name."""
        return (self.name,) if self.name == self.api else (self.name, self.api)


def classify(method: str, target: str, headers: Mapping[str, str], body: bytes) -> Operation:
    """Name the operation of one request. Writes into a table's log folder are named as commits
    (DeltaCommit, HudiCommit, IcebergCommit) so a fault plan can aim at them.

    Args:
        method: HTTP method.
        target: the request target, path and query string (`/bucket/key?x-id=GetObject`).
        headers: request headers (any case).
        body: the request body (read for SQS, whose operation and queue may be in it).
    """
    hdr = {k.lower(): v for k, v in headers.items()}
    url = urlsplit(target)
    params = dict(parse_qsl(url.query, keep_blank_values=True))
    service = _service(hdr, params, url.path)
    if service == "s3":
        return _s3(method.upper(), url.path, params, hdr)
    return _query_or_json(service, hdr, params, body)


def _service(hdr: Mapping[str, str], params: Mapping[str, str], path: str) -> str:
    scope = _SCOPE.search(hdr.get("authorization", "") or f"Credential={params.get('X-Amz-Credential', '')}")
    if scope:
        return scope.group(1)
    if hdr.get("x-amz-target", "").startswith("AmazonSQS."):
        return "sqs"
    return "sqs" if _QUEUE_PATH.match(path) else "s3"


def _query_or_json(service: str, hdr: Mapping[str, str], params: Mapping[str, str],
                   body: bytes) -> Operation:
    fields: dict[str, object] = dict(params)
    if "x-amz-target" in hdr:  # JSON protocol: the operation is in a header, the queue in the body
        api = hdr["x-amz-target"].rpartition(".")[2]
        with contextlib.suppress(ValueError, TypeError):  # an unreadable body names no queue
            fields |= json.loads(body or b"{}")
    else:  # query protocol: form fields in the body or the query string
        fields |= dict(parse_qsl(body.decode("utf-8", "replace")))
        api = str(fields.get("Action", "Unknown"))
    queue_url = str(fields.get("QueueUrl") or fields.get("QueueName") or "")
    return Operation(service, api, api, queue=queue_url.rstrip("/").rpartition("/")[2])


def _s3(method: str, path: str, params: Mapping[str, str], hdr: Mapping[str, str]) -> Operation:
    bucket, _, key = path.lstrip("/").partition("/")
    key = unquote(key)
    if "x-id" in params:  # boto3 names the operation itself
        api = params["x-id"]
    elif not bucket:
        api = "ListBuckets"
    elif not key:
        api = _bucket_api(method, params)
    else:
        api = _object_api(method, params, hdr)
    name = _commit_name(key) if api in _COMMIT_WRITES else api
    return Operation("s3", api, name or api, bucket=unquote(bucket), key=key)


def _bucket_api(method: str, params: Mapping[str, str]) -> str:
    sub = _subresource(params, _LIST_PARAMS)
    if method == "GET" and not sub:
        return "ListObjectsV2" if params.get("list-type") == "2" else "ListObjects"
    known = {("POST", "delete"): "DeleteObjects", ("GET", "uploads"): "ListMultipartUploads",
             ("GET", "versions"): "ListObjectVersions", ("GET", "location"): "GetBucketLocation",
             ("HEAD", ""): "HeadBucket", ("PUT", ""): "CreateBucket", ("DELETE", ""): "DeleteBucket"}
    verb = {"GET": "Get", "PUT": "Put", "DELETE": "Delete"}.get(method, method.title())
    return known.get((method, sub), f"{verb}Bucket{sub.title()}")


def _object_api(method: str, params: Mapping[str, str], hdr: Mapping[str, str]) -> str:
    copy = "x-amz-copy-source" in hdr
    if method == "PUT" and "uploadId" in params:
        return "UploadPartCopy" if copy else "UploadPart"
    if method == "POST":
        return "CreateMultipartUpload" if "uploads" in params else "CompleteMultipartUpload"
    if "uploadId" in params:
        return {"GET": "ListParts", "DELETE": "AbortMultipartUpload"}.get(method, method)
    sub = _subresource(params, _OBJECT_PARAMS)
    if sub:  # ?tagging, ?acl, ?retention ...
        verb = {"GET": "Get", "PUT": "Put", "DELETE": "Delete"}.get(method, method.title())
        return f"{verb}Object{sub.title()}"
    if method == "PUT":
        return "CopyObject" if copy else "PutObject"
    return {"GET": "GetObject", "HEAD": "HeadObject", "DELETE": "DeleteObject"}.get(method, method)


def _subresource(params: Mapping[str, str], plain: set[str]) -> str:
    """The first parameter naming a sub-resource (?tagging), ignoring presigning and overrides."""
    return next((p for p in params if p not in plain
                 and not p.lower().startswith(("response-", "x-amz-"))), "")


def _commit_name(key: str) -> str:
    """DeltaCommit/HudiCommit/IcebergCommit for a write into a table's log folder, else ''."""
    folders = key.split("/")[:-1]
    if "_delta_log" in folders:
        return "DeltaCommit"
    if ".hoodie" in folders:
        return "HudiCommit"
    return "IcebergCommit" if "metadata" in folders else ""
