"""Adapter: S3 HEAD (parallel, in the driver) and listing through boto3."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import ListedObject, ObjectHead, Unreadable

NOT_FOUND = {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}
DENIED = {"403", "AccessDenied", "Forbidden"}


def translate(exc: ClientError, what: str) -> Exception:
    """One place where S3 errors become lakeinlet errors."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code in ("AccessDenied", "403", "NoSuchBucket", "InvalidAccessKeyId"):
        return TerminalError(f"{what}: {code}: {exc}")
    return TransientError(f"{what}: {code}: {exc}")


class S3ObjectStore:
    """HEADs planned objects in parallel and lists prefixes (for backfills)."""

    def __init__(self, aws: AwsSection, threads: int = 16, s3: Any = None) -> None:
        self.s3 = s3 or client("s3", aws, max_pool_connections=max(threads, 10))
        self.threads = threads
        self._buckets: dict[str, bool] = {}

    def _head(self, obj: PlannedObject) -> ObjectHead | Unreadable:
        try:
            resp = self.s3.head_object(Bucket=obj.bucket, Key=obj.key)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in NOT_FOUND:
                return Unreadable(self._not_found(obj))
            if code in DENIED:
                return Unreadable(f"access denied ({code}) reading s3://{obj.bucket}/{obj.key}: the "
                                  "loader's credentials may not read it; once they may, "
                                  "`lakeinlet-load checkpoint reset` plans it again")
            raise translate(exc, f"HEAD s3://{obj.bucket}/{obj.key}") from exc
        return ObjectHead(int(resp["ContentLength"]), str(resp.get("ETag", "")).strip('"') or None,
                          resp.get("LastModified"))

    def _not_found(self, obj: PlannedObject) -> str:
        """A HEAD 404 has no body: ask the bucket (once per bucket) which of the two is missing."""
        if obj.bucket not in self._buckets:
            try:
                self.s3.head_bucket(Bucket=obj.bucket)
                self._buckets[obj.bucket] = True
            except ClientError as exc:
                self._buckets[obj.bucket] = str(exc.response.get("Error", {}).get("Code", "")) \
                    not in NOT_FOUND
        if not self._buckets[obj.bucket]:
            return f"no such bucket: {obj.bucket} (the event names a bucket that does not exist)"
        return "object not found (deleted before the load)"

    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead | Unreadable]:
        with ThreadPoolExecutor(self.threads) as pool:
            heads = list(pool.map(self._head, objs))
        return {(o.bucket, o.key): h for o, h in zip(objs, heads, strict=True)}

    def list(self, bucket: str, prefix: str) -> Iterator[ListedObject]:
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        try:
            for page in pages:
                for o in page.get("Contents", []):
                    yield ListedObject(bucket, o["Key"], int(o["Size"]),
                                       str(o.get("ETag", "")).strip('"') or None, o["LastModified"])
        except ClientError as exc:
            raise translate(exc, f"LIST s3://{bucket}/{prefix}") from exc
