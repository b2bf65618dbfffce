"""Compressed objects under keys without the codec's suffix (Firehose writes gzip with no file
extension): each is copied, server-side and pinned to the version its HEAD saw, to a key that
ends in the suffix beside the ledger, read from there under its own key's lineage, and deleted
once its batch is committed or failed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from botocore.exceptions import ClientError

from lakeinlet.incremental.model import CORRUPT, FILTERED, MISSING, PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read import codecs
from lakeinlet.incremental.read.verdicts import Failed

COPY_MAX = 5 * 1024 ** 3
"""The largest object one CopyObject copies (larger ones need a multipart copy: set aside)."""
STALE = timedelta(days=1)
"""Copies older than this are a crashed run's: deleted by the next batch that stages."""
THREADS = 8
DELETE_MAX = 1000


@dataclass
class Copies:
    """One batch's staged copies: where each object is read, its HEAD as copied, the objects not
    copied (why), and `unpersist` (the batch's `release`) deleting them."""

    staging: Staging | None = None
    batch_id: str = ""
    uris: dict[Ref, str] = field(default_factory=dict)
    heads: dict[Ref, ObjectHead] = field(default_factory=dict)
    failed: Failed = field(default_factory=dict)

    def unpersist(self) -> None:
        if self.staging is not None and self.uris:
            self.staging.drop(self.uris.values())
            self.uris = {}


class Staging:
    """Copies of one batch's compressed objects under `root` (`s3://bucket/prefix`)."""

    def __init__(self, s3: Any, root: str, scheme: str) -> None:
        parts = urlsplit(root.rstrip("/") + "/")
        self.s3, self.bucket, self.prefix, self.scheme = s3, parts.netloc, parts.path.lstrip("/"), scheme

    def copy(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead], batch_id: str) -> Copies:
        """Each object copied to `<root>/<batch_id>/<n><suffix>`: its staged URI and HEAD (the
        copy's mtime), or why it is not read (overwritten or deleted since its HEAD, too large)."""
        jobs = [(o, heads[(o.bucket, o.key)], f"{self.prefix}{batch_id}/{n:06d}{suffix}")
                for n, o in enumerate(objs) if (suffix := stage_suffix(o.key, heads.get((o.bucket, o.key))))]
        out = Copies(self, batch_id)
        if not jobs:
            return out
        self._drop_stale()
        with ThreadPoolExecutor(THREADS) as pool:
            for (o, head, key), found in zip(jobs, pool.map(lambda j: self._copy(*j), jobs), strict=True):
                if isinstance(found, tuple):
                    out.failed[(o.bucket, o.key)] = found
                else:
                    out.uris[(o.bucket, o.key)] = f"{self.scheme}://{self.bucket}/{key}"
                    out.heads[(o.bucket, o.key)] = replace(head, last_modified=found)
        return out

    def _copy(self, o: PlannedObject, head: ObjectHead, key: str) -> datetime | tuple[str, str]:
        if head.size > COPY_MAX:
            return CORRUPT, f"{codecs.verdict(o.key, head)} (s3://{o.bucket}/{o.key})"
        source: dict[str, str] = {"Bucket": o.bucket, "Key": o.key}
        if o.version_id:
            source["VersionId"] = o.version_id
        pinned = {"CopySourceIfMatch": head.etag} if head.etag else {}
        try:
            answer = self.s3.copy_object(Bucket=self.bucket, Key=key, CopySource=source, **pinned)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("PreconditionFailed", "412"):
                return FILTERED, ("object overwritten during the load (etag changed since its HEAD); "
                                  "its newer version's event loads it")
            if code in ("NoSuchKey", "NoSuchVersion", "404"):
                return MISSING, f"object not found when copied to be read: s3://{o.bucket}/{o.key}"
            raise
        return answer["CopyObjectResult"]["LastModified"]

    def drop(self, uris: Iterable[str]) -> None:
        """Delete these copies (their URIs: no listing)."""
        self._delete([urlsplit(u).path.lstrip("/") for u in uris])

    def _drop_stale(self) -> None:
        cutoff = datetime.now(UTC) - STALE
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            self._delete([c["Key"] for c in page.get("Contents", []) if c["LastModified"] < cutoff])

    def _delete(self, keys: list[str]) -> None:
        for start in range(0, len(keys), DELETE_MAX):  # DeleteObjects takes 1,000 keys a call
            chunk = [{"Key": k} for k in keys[start:start + DELETE_MAX]]
            self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": chunk, "Quiet": True})


def stage_suffix(key: str, head: ObjectHead | None) -> str | None:
    """The suffix under which Spark decompresses the object's bytes, when its key lacks it
    (None: nothing to stage)."""
    codec = codecs.unsuffixed(key, head)
    return None if codec is None else codec.suffixes[0]
