"""Adapter: S3 HEAD and Parquet footers (parallel, in the driver) and listing through boto3."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow.parquet as pq
from botocore.exceptions import BotoCoreError, ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import OVERWRITTEN, Footer, ListedObject, ObjectHead, Unreadable

NOT_FOUND = {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}
CHANGED = {"412", "PreconditionFailed"}
FOOTER_TAIL = 64 * 1024  # one ranged GET of this many trailing bytes holds most Parquet footers
Ref = tuple[str, str]
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

    def footers(self, objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead]
                ) -> dict[Ref, Footer | str]:
        """The Parquet footers of `objs` (row count, schema), without Spark: a ranged GET of each
        object's tail (a second one when the footer is longer), If-Match the HEAD's etag, in
        parallel. OVERWRITTEN when the object's etag is no longer the HEAD's. An object left out
        could not be read here (the caller reads it another way)."""
        with ThreadPoolExecutor(self.threads) as pool:
            found = list(pool.map(lambda o: self._footer(o, heads.get((o.bucket, o.key))), objs))
        return {(o.bucket, o.key): f for o, f in zip(objs, found, strict=True) if f is not None}

    def _footer(self, obj: PlannedObject, head: ObjectHead | None) -> Footer | str | None:
        etag = head.etag if head is not None else None
        for _ in range(3):  # a cut body is read again; any other failure: left to the caller
            try:
                tail, size, etag = self._tail(obj, FOOTER_TAIL, etag)
                if len(tail) < 12 or tail[-4:] != b"PAR1":
                    return None
                need = int.from_bytes(tail[-8:-4], "little") + 8
                if need > len(tail) and need <= size:
                    tail, size, etag = self._tail(obj, need, etag)
                meta = pq.read_metadata(_Tail(tail, size))
                return Footer(int(meta.num_rows), meta.schema)
            except ClientError as exc:
                code = str(exc.response.get("Error", {}).get("Code", ""))
                return OVERWRITTEN if code in CHANGED else None
            except BotoCoreError:
                continue
            except (OSError, ValueError):  # pyarrow could not parse it: Spark's count decides
                return None
        return None

    def _tail(self, obj: PlannedObject, length: int, etag: str | None) -> tuple[bytes, int, str | None]:
        """The last `length` bytes (all of a shorter object), its size and etag."""
        match = {"IfMatch": f'"{etag.strip(chr(34))}"'} if etag else {}
        resp = self.s3.get_object(Bucket=obj.bucket, Key=obj.key, Range=f"bytes=-{length}", **match)
        body = resp["Body"].read()
        total = str(resp.get("ContentRange", "")).rpartition("/")[2]
        size = int(total) if total.isdigit() else len(body)
        return body, size, str(resp.get("ETag", "")).strip('"') or etag

    def list(self, bucket: str, prefix: str) -> Iterator[ListedObject]:
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        try:
            for page in pages:
                for o in page.get("Contents", []):
                    yield ListedObject(bucket, o["Key"], int(o["Size"]),
                                       str(o.get("ETag", "")).strip('"') or None, o["LastModified"])
        except ClientError as exc:
            raise translate(exc, f"LIST s3://{bucket}/{prefix}") from exc


class _Tail(io.RawIOBase):
    """A read-only file of `size` bytes of which only the trailing `data` is known: what
    pyarrow reads to parse a Parquet footer (it reads nothing before the footer)."""

    def __init__(self, data: bytes, size: int) -> None:
        super().__init__()
        self._data, self._size, self._pos = data, size, 0
        self._start = size - len(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer: Any) -> int:
        if self._pos < self._start:
            raise OSError("read before the footer: not fetched")
        chunk = self._data[self._pos - self._start:self._pos - self._start + len(buffer)]
        buffer[:len(chunk)] = chunk
        self._pos += len(chunk)
        return len(chunk)
