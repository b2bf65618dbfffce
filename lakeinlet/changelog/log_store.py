"""Where the poller writes changelog files and commits: a local folder or an S3 prefix.

A Delta commit needs one primitive, put-if-absent: locally a hard link that fails when the name
exists (what delta-rs does on a local file system), on S3 a conditional PUT (`If-None-Match: *`,
what delta-rs does with `aws_conditional_put=etag`). Both writers can therefore share one log.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from botocore.exceptions import BotoCoreError, ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import LakeinletError, TerminalError, TransientError
from lakeinlet.retry import transient

EXISTS = {"PreconditionFailed", "412"}
"""S3's answer to a conditional PUT whose key exists."""
RACE = {"ConditionalRequestConflict", "409"}
"""S3's answer when another conditional PUT of the same key was in flight: ask again."""
PUT_ATTEMPTS = 5
"""Conditional PUTs of one key while S3 answers RACE (botocore does not retry a 409)."""


class LogStore(Protocol):
    """Files of one table, addressed by paths relative to its root."""

    def put(self, path: str, data: bytes) -> None:
        """Write `data` at `path` (a new, uniquely named data file)."""
        ...

    def put_if_absent(self, path: str, data: bytes) -> bool:
        """Write `data` at `path` unless something is there; False when it was."""
        ...

    def get(self, path: str) -> bytes | None:
        """The bytes at `path`, or None when nothing is there."""
        ...


class LocalStore:
    """A table folder on a local (POSIX) file system."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
        tmp.write_bytes(data)
        try:
            os.link(tmp, target)  # atomic; fails if the name exists
            return True
        except FileExistsError:
            return False
        finally:
            tmp.unlink()

    def get(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None


class S3Store:
    """A table under s3://bucket/prefix, through a ready boto3 S3 client (thread-safe).

    botocore retries each call (throttling, 5xx, dropped connections); `lakeinlet.retry` retries
    only what it cannot see: a conditional PUT that raced another, a body cut short mid-read.
    """

    def __init__(self, uri: str, aws: AwsSection, s3: Any = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        parsed = urlparse(uri)
        self.bucket, self.prefix = parsed.netloc, parsed.path.strip("/")
        self.s3 = s3 or client("s3", aws)
        self._sleep = sleep

    def _key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def put(self, path: str, data: bytes) -> None:
        self._call("PUT", path, Body=data)

    def put_if_absent(self, path: str, data: bytes) -> bool:
        return bool(transient(PUT_ATTEMPTS, sleep=self._sleep, on=_Raced)(self._put_if_absent, path, data))

    def _put_if_absent(self, path: str, data: bytes) -> bool:
        try:
            self._call("PUT", path, Body=data, IfNoneMatch="*")
            return True
        except _Answered as answer:
            if answer.code in EXISTS:
                return False
            if answer.code in RACE:
                raise _Raced(f"{answer.error} (another conditional PUT of it was in flight)") from None
            raise answer.error from None

    def get(self, path: str, attempts: int = 3) -> bytes | None:
        """The object's bytes, or None if there is none; a body cut short is read again."""
        return transient(attempts, sleep=self._sleep, on=_BodyCut)(self._get, path)

    def _get(self, path: str) -> bytes | None:
        try:
            body = self._call("GET", path)["Body"]
        except _Answered as answer:
            if answer.code in ("NoSuchKey", "404"):
                return None
            raise answer.error from None
        try:
            return bytes(body.read())
        except BotoCoreError as exc:  # ResponseStreamingError: the connection broke mid-body
            raise _BodyCut(f"GET s3://{self.bucket}/{self._key(path)}: {exc}") from exc

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        key = self._key(path)
        action = self.s3.put_object if method == "PUT" else self.s3.get_object
        try:
            return action(Bucket=self.bucket, Key=key, **kwargs)
        except ClientError as exc:
            raise _Answered(exc, translate(exc, f"{method} s3://{self.bucket}/{key}")) from exc
        except BotoCoreError as exc:
            raise TransientError(f"{method} s3://{self.bucket}/{key}: {exc}") from exc


class _Raced(TransientError):
    """S3 answered a conditional PUT with RACE: another one of the same key was in flight."""


class _BodyCut(TransientError):
    """The connection broke while reading a GET's body (after botocore's retries are over)."""


class _Answered(Exception):
    """S3 answered with an error: its code, and the lakeinlet error it stands for."""

    def __init__(self, exc: ClientError, error: LakeinletError) -> None:
        super().__init__(str(error))
        self.code, self.error = str(exc.response.get("Error", {}).get("Code", "")), error


def translate(exc: ClientError, what: str) -> LakeinletError:
    """One place where S3 errors become lakeinlet errors (5xx and throttling are transient)."""
    err = exc.response.get("Error", {})
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    text = f"{what}: {err.get('Code', '')}: {err.get('Message', '')}"
    if status >= 500 or err.get("Code") in ("SlowDown", "RequestTimeout", *RACE):
        return TransientError(text)
    return TerminalError(text)


def store_for(uri: str, aws: AwsSection) -> LogStore:
    """The store of a table URI: s3:// (or s3a://) on S3, anything else a local path."""
    if uri.startswith(("s3://", "s3a://")):
        return S3Store("s3://" + uri.split("://", 1)[1], aws)
    return LocalStore(uri)
