"""Adapter: S3 HEAD and Parquet footers (parallel, in the driver) and listing through boto3."""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pyarrow.parquet as pq
from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.incremental.archived import IDENTITY_META
from lakeinlet.incremental.model import FILTERED, PlannedObject, Ref
from lakeinlet.incremental.ports import OVERWRITTEN, Footer, ListedObject, ObjectHead, Unreadable
from lakeinlet.incremental.read.sniff import FIRST_BYTES
from lakeinlet.retry import transient

NOT_FOUND = {"404", "NoSuchKey", "NotFound", "NoSuchBucket"}
CHANGED = {"412", "PreconditionFailed"}
FOOTER_TAIL = 64 * 1024  # one ranged GET of this many trailing bytes holds most Parquet footers
FOOTER_ATTEMPTS = 3
"""Reads of one footer while its body is cut short mid-read (botocore retries the GET itself)."""
DENIED = {"403", "AccessDenied", "Forbidden"}


def translate(exc: ClientError, what: str) -> Exception:
    """One place where S3 errors become lakeinlet errors."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code in ("AccessDenied", "403", "NoSuchBucket", "InvalidAccessKeyId"):
        return TerminalError(f"{what}: {code}: {exc}")
    return TransientError(f"{what}: {code}: {exc}")


class S3ObjectStore:
    """HEADs planned objects in parallel and lists prefixes (for backfills)."""

    def __init__(self, aws: AwsSection, threads: int = 16, s3: Any = None, parquet: bool = False,
                 sleep: Callable[[float], None] = time.sleep, text: bool = False) -> None:
        """`parquet`: the objects are Parquet, so the check before the read is a ranged GET of
        each object's tail instead of a HEAD: the same answer (size, etag, mtime, or why it
        cannot be read) plus the footer, which `footers` then serves without another request.
        `text` (JSON, CSV, text, XML): a ranged GET of each object's first bytes instead, kept in its
        `ObjectHead.first` (`read.sniff` judges them). `sleep`: the pause before a footer whose
        body was cut short is read again."""
        self.s3 = s3 or client("s3", aws, max_pool_connections=max(threads, 10))
        self.threads, self.parquet, self.text, self._sleep = threads, parquet, text, sleep
        self._buckets: dict[str, bool] = {}
        self._footers: dict[Ref, tuple[str | None, Footer]] = {}

    def _head(self, obj: PlannedObject) -> ObjectHead | Unreadable:
        if self.parquet and (found := self._head_by_tail(obj)) is not None:
            return found
        if self.text and (found := self._head_by_start(obj)) is not None:
            return found
        try:
            resp = self.s3.head_object(Bucket=obj.bucket, Key=obj.key)
        except ParamValidationError as exc:  # botocore refuses the bucket or key before any request
            return Unreadable(f"S3 takes no request for s3://{obj.bucket}/{obj.key}: "
                              f"{' '.join(str(exc).split())}", FILTERED, gone=False)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if (unreadable := self._unreadable(obj, code)) is not None:
                return unreadable
            raise translate(exc, f"HEAD s3://{obj.bucket}/{obj.key}") from exc
        return ObjectHead(int(resp["ContentLength"]), str(resp.get("ETag", "")).strip('"') or None,
                          resp.get("LastModified"), _archive_of(resp),
                          content_encoding=resp.get("ContentEncoding"))

    def _ranged(self, obj: PlannedObject, span: str) -> tuple[ObjectHead, bytes] | Unreadable | None:
        """The HEAD's answer and the bytes of one ranged GET (`span`: `bytes=…`); None when this
        GET cannot answer (an empty object's 416, an error after retries): HEAD then."""
        try:
            resp = self.s3.get_object(Bucket=obj.bucket, Key=obj.key, Range=span)
            body = resp["Body"].read()
        except ClientError as exc:
            return self._unreadable(obj, str(exc.response.get("Error", {}).get("Code", "")))
        except BotoCoreError:
            return None
        total = str(resp.get("ContentRange", "")).rpartition("/")[2]
        etag = str(resp.get("ETag", "")).strip('"') or None
        return ObjectHead(int(total) if total.isdigit() else len(body), etag,
                          resp.get("LastModified"), _archive_of(resp),
                          content_encoding=resp.get("ContentEncoding")), body

    def _head_by_start(self, obj: PlannedObject) -> ObjectHead | Unreadable | None:
        """The HEAD's answer from a ranged GET of the first bytes, which it keeps."""
        found = self._ranged(obj, f"bytes=0-{FIRST_BYTES - 1}")
        if not isinstance(found, tuple):
            return found
        return replace(found[0], first=found[1])

    def _head_by_tail(self, obj: PlannedObject) -> ObjectHead | Unreadable | None:
        """The HEAD's answer from a ranged GET of the tail, the footer kept for `footers`."""
        found = self._ranged(obj, f"bytes=-{FOOTER_TAIL}")
        if not isinstance(found, tuple):
            return found
        head, tail = found
        etag = head.etag
        try:
            footer = self._parse(obj, tail, head.size, etag)
        except (ClientError, BotoCoreError, _BodyCut, OSError, ValueError):
            footer = None  # `footers` tries again, or Spark counts
        if isinstance(footer, Footer):
            self._footers[(obj.bucket, obj.key)] = (etag, footer)
        return head

    def _unreadable(self, obj: PlannedObject, code: str) -> Unreadable | None:
        if code in NOT_FOUND:
            return Unreadable(self._not_found(obj))
        if code in DENIED:
            return Unreadable(f"access denied ({code}) reading s3://{obj.bucket}/{obj.key}: the "
                              "loader's credentials may not read it; once they may, "
                              "`lakeinlet-load checkpoint reset` plans it again", gone=False)
        return None

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
        self._footers.clear()  # footers kept from the previous batch's checks
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
        kept = self._footers.get((obj.bucket, obj.key))
        if kept is not None and head is not None and kept[0] == etag:
            return kept[1]  # read with the check before the read, from the same response
        try:
            return transient(FOOTER_ATTEMPTS, sleep=self._sleep, on=_BodyCut)(self._read_footer, obj, etag)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            return OVERWRITTEN if code in CHANGED else None
        except (BotoCoreError, _BodyCut):  # botocore's or our retries are over: left to the caller
            return None
        except (OSError, ValueError):  # pyarrow could not parse it: Spark's count decides
            return None

    def _read_footer(self, obj: PlannedObject, etag: str | None) -> Footer | None:
        tail, size, etag = self._tail(obj, FOOTER_TAIL, etag)
        return self._parse(obj, tail, size, etag)

    def _parse(self, obj: PlannedObject, tail: bytes, size: int, etag: str | None) -> Footer | None:
        """The footer in `tail` (the object's last bytes), fetching the rest when it is longer
        (If-Match `etag`); None when the bytes are not Parquet's."""
        if len(tail) < 12 or tail[-4:] != b"PAR1":
            return None
        need = int.from_bytes(tail[-8:-4], "little") + 8
        if need > len(tail) and need <= size:
            tail, size, etag = self._tail(obj, need, etag)
        meta = pq.read_metadata(_Tail(tail, size))
        return Footer(int(meta.num_rows), meta.schema)

    def _tail(self, obj: PlannedObject, length: int, etag: str | None) -> tuple[bytes, int, str | None]:
        """The last `length` bytes (all of a shorter object), its size and etag.

        Raises:
            _BodyCut: the connection broke while reading the body.
        """
        match = {"IfMatch": f'"{etag.strip(chr(34))}"'} if etag else {}
        resp = self.s3.get_object(Bucket=obj.bucket, Key=obj.key, Range=f"bytes=-{length}", **match)
        try:
            body = resp["Body"].read()
        except BotoCoreError as exc:  # ResponseStreamingError: the connection broke mid-body
            raise _BodyCut(f"GET s3://{obj.bucket}/{obj.key} (last {length} bytes): {exc}") from exc
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


class _BodyCut(TransientError):
    """The connection broke while reading a GET's body (after botocore's retries are over)."""


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


def _archive_of(resp: Mapping[str, Any]) -> str | None:
    """The identity an archived copy is marked with (HEAD and GET return user metadata alike)."""
    found = (resp.get("Metadata") or {}).get(IDENTITY_META)
    return str(found) if found else None
