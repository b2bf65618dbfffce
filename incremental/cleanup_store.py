"""Adapter: source cleanup's S3 calls through boto3 (HEAD, a copy of one exact version, a delete
conditional on the version's etag), S3 errors translated in one place."""

from __future__ import annotations

import logging
from typing import Any

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.events import NULL_VERSION
from lakeinlet.incremental.archived import IDENTITY_META
from lakeinlet.incremental.cleanup_ports import CHANGED, DELETED, GONE, Loaded, SourceHead
from lakeinlet.incremental.objects import CHANGED as PRECONDITION_FAILED
from lakeinlet.incremental.objects import NOT_FOUND, translate
from lakeinlet.logs import event

log = logging.getLogger(__name__)

KEPT_HEADERS = ("ContentType", "ContentEncoding", "ContentDisposition", "ContentLanguage", "CacheControl")
"""Headers of the source a copy with new metadata repeats (S3 would otherwise reset them)."""
PROBE_BODY = b"lakeinlet: a probe of conditional deletes, deleted at once"
WRONG_ETAG = '"00000000000000000000000000000000"'
COPY = TransferConfig(multipart_threshold=5 * 1024**3, multipart_chunksize=512 * 1024**2)
"""One CopyObject up to S3's 5 GiB limit; a larger object is copied in parts of this size."""


class S3SourceCleaner:
    """HEADs, archives and deletes source objects; never deletes a version other than the one given."""

    def __init__(self, aws: AwsSection, threads: int = 8, s3: Any = None) -> None:
        self.s3 = s3 or client("s3", aws, max_pool_connections=max(threads, 10))

    def head(self, bucket: str, key: str) -> SourceHead | None:
        try:
            r = self.s3.head_object(Bucket=bucket, Key=key)
        except ClientError as exc:
            if _code(exc) in NOT_FOUND:
                return None
            raise translate(exc, f"HEAD s3://{bucket}/{key}") from exc
        version = r.get("VersionId")
        return SourceHead(str(r.get("ETag", "")).strip('"') or None,
                          None if version in (None, NULL_VERSION) else str(version),
                          int(r.get("ContentLength", 0)), dict(r.get("Metadata") or {}),
                          {h: r[h] for h in KEPT_HEADERS if r.get(h)})

    def copy(self, obj: Loaded, head: SourceHead, bucket: str, key: str) -> None:
        """Copy the version `head` saw (by version id, else only while its etag is unchanged),
        its metadata marked with the loaded identity, so a later pass knows the copy is done."""
        source = {"Bucket": obj.bucket, "Key": obj.key}
        extra: dict[str, Any] = {**head.headers, "MetadataDirective": "REPLACE",
                                 "Metadata": {**head.metadata, IDENTITY_META: obj.identity}}
        if head.version_id:
            source["VersionId"] = head.version_id
        elif head.etag:
            extra["CopySourceIfMatch"] = f'"{head.etag}"'
        try:
            if head.size <= COPY.multipart_threshold:  # one request (the managed copy HEADs first)
                self.s3.copy_object(CopySource=source, Bucket=bucket, Key=key, **extra)
            else:
                self.s3.copy(source, bucket, key, ExtraArgs=extra, Config=COPY)
        except ClientError as exc:
            raise translate(exc, f"COPY s3://{obj.bucket}/{obj.key} to s3://{bucket}/{key}") from exc

    def delete(self, bucket: str, key: str, etag: str, version_id: str | None = None) -> str:
        """Delete the version `version_id` of a versioned bucket (never another), else the current
        object only while its etag is `etag` (S3's conditional delete: `Cleanup` refuses a store
        that ignores it)."""
        exact = {"VersionId": version_id} if version_id else {"IfMatch": f'"{etag}"'}
        try:
            self.s3.delete_object(Bucket=bucket, Key=key, **exact)
        except ClientError as exc:
            if _code(exc) in PRECONDITION_FAILED:
                return CHANGED
            if _code(exc) in NOT_FOUND | {"NoSuchVersion"}:
                return GONE
            what = f"DELETE s3://{bucket}/{key}" + (f" version {version_id} (a versioned bucket's loaded "
                                                    "version is deleted by id: s3:DeleteObjectVersion)"
                                                    if version_id else "")
            raise translate(exc, what) from exc
        return DELETED

    def honours_if_match(self, bucket: str, key: str) -> bool:
        """Write a scratch object, delete it If-Match another etag: True when refused (412). The
        scratch object (and a delete marker a versioned bucket made) is removed either way."""
        try:
            written = self.s3.put_object(Bucket=bucket, Key=key, Body=PROBE_BODY).get("VersionId")
            honoured, marker = self._wrong_if_match(bucket, key)
        except ClientError as exc:
            raise translate(exc, f"s3://{bucket}/{key} (probe of conditional deletes)") from exc
        self._remove(bucket, key, [v for v in (written, marker) if v])
        return honoured

    def _remove(self, bucket: str, key: str, versions: list[str | None]) -> None:
        """Best effort: the scratch object's versions (one plain delete where unversioned); a refusal
        (no s3:DeleteObjectVersion) leaves a few bytes under the probe's folder, and is logged."""
        try:
            for version in [*versions] or [None]:
                self.s3.delete_object(Bucket=bucket, Key=key, **({"VersionId": version} if version else {}))
        except ClientError as exc:
            event(log, "probe left behind", level=logging.WARNING, object=f"s3://{bucket}/{key}",
                  error=_code(exc))

    def _wrong_if_match(self, bucket: str, key: str) -> tuple[bool, str | None]:
        """Whether a delete If-Match a wrong etag is refused, and the delete marker it made if not."""
        try:
            done = self.s3.delete_object(Bucket=bucket, Key=key, IfMatch=WRONG_ETAG)
        except ClientError as exc:
            if _code(exc) in PRECONDITION_FAILED:
                return True, None
            raise
        return False, done.get("VersionId")


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
