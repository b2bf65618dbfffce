"""One writer per table: a lease lakeinlet holds while it loads, for formats whose commits do not
check the checkpoint themselves (Hudi: two writers without one silently lose rows).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlparse

from botocore.exceptions import ClientError

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.logs import event

log = logging.getLogger(__name__)
PRECONDITION = {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"}


class LeaseHeld(TerminalError):
    """Another loader holds the table's lease (and kept it for the whole wait)."""


class LeaseLost(TransientError):
    """This loader no longer holds the lease (it expired and another loader took it)."""


@dataclass(frozen=True)
class LeaseRecord:
    holder: str
    expires_at: float
    role: str = "a loader"
    """Who holds it, in words: `a loader` (a run), `maintain` (a compaction); older records
    have none."""

    def to_json(self) -> str:
        return json.dumps({"holder": self.holder, "expires_at": self.expires_at, "role": self.role,
                           "host": socket.gethostname(), "pid": os.getpid()})

    @classmethod
    def from_json(cls, text: str) -> LeaseRecord:
        doc = json.loads(text)
        return cls(str(doc["holder"]), float(doc["expires_at"]), str(doc.get("role", "a loader")))

    @property
    def who(self) -> str:
        return f"{self.role} ({self.holder})"


class Lease(Protocol):
    def acquire(self, wait_seconds: float, role: str = "a loader") -> None: ...

    def check(self) -> None: ...

    def release(self) -> None: ...


class S3Lease:
    """The lease object `s3://bucket/key`, written with conditional PUTs only: `If-None-Match: *`
    to take a free lease, `If-Match: <etag>` to renew it or to take over one that expired, so two
    loaders never both hold it. A heartbeat renews it every third of its time; a loader checks it
    is still held before each commit."""

    def __init__(self, s3: Any, uri: str, ttl_seconds: float, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        parsed = urlparse(uri)
        self.s3, self.bucket, self.key = s3, parsed.netloc, parsed.path.lstrip("/")
        self.ttl, self.clock, self.sleep = ttl_seconds, clock, sleep
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.etag: str | None = None
        self.role = "a loader"
        self.lost = False
        self._stop = threading.Event()
        self._renewing = threading.Lock()
        self._beat: threading.Thread | None = None

    def _read(self) -> tuple[LeaseRecord | None, str | None]:
        try:
            got = self.s3.get_object(Bucket=self.bucket, Key=self.key)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None, None
            raise
        return LeaseRecord.from_json(got["Body"].read().decode()), got["ETag"]

    def _put(self, expires_at: float, **condition: str) -> bool:
        """Write our record if the condition holds; False if another writer won the race."""
        body = LeaseRecord(self.holder, expires_at, self.role).to_json().encode()
        try:
            resp = self.s3.put_object(Bucket=self.bucket, Key=self.key, Body=body, **condition)
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in PRECONDITION:
                return False
            raise
        self.etag = resp["ETag"]
        return True

    def _try(self) -> LeaseRecord | None:
        """One attempt: take the lease if free or expired; the other holder's record if not."""
        record, etag = self._read()
        now = self.clock()
        if record is None:
            taken = self._put(now + self.ttl, IfNoneMatch="*")
        elif record.holder == self.holder or record.expires_at < now:
            taken = self._put(now + self.ttl, IfMatch=etag or "")
        else:
            return record
        return None if taken else LeaseRecord("(a concurrent taker)", now)

    def acquire(self, wait_seconds: float, role: str = "a loader") -> None:
        """Take the lease as `role`, waiting up to `wait_seconds` for its holder to release it or
        let it expire; then renew it in the background until `release`.

        Raises:
            LeaseHeld: still held by another writer after the wait (named with its role).
        """
        deadline, said, self.role = self.clock() + wait_seconds, False, role
        while (other := self._try()) is not None:
            if not said:
                event(log, "lease_wait", lease=f"s3://{self.bucket}/{self.key}", holder=other.who)
                said = True
            if self.clock() >= deadline:
                raise LeaseHeld(f"{other.who} holds the writer lease "
                                f"s3://{self.bucket}/{self.key} until "
                                f"{time.strftime('%H:%M:%S', time.gmtime(other.expires_at))} UTC; "
                                "one writer per table keeps loads exactly once")
            self.sleep(min(5.0, max(0.5, self.ttl / 20)))
        self.lost = False
        self._stop.clear()
        self._beat = threading.Thread(target=self._heartbeat, name="lakeinlet-lease", daemon=True)
        self._beat.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                renewed = self.renew()
            except Exception:  # a failed renewal is retried next beat; `check` has the last word
                continue
            if not renewed:
                self.lost = True
                return

    def renew(self) -> bool:
        """Extend the lease by its time if this loader still holds it (the heartbeat's beat);
        never between `check`'s read and its comparison."""
        with self._renewing:
            return self._put(self.clock() + self.ttl, IfMatch=self.etag or "")

    def check(self) -> None:
        """Raise LeaseLost unless this loader still holds the lease (called before a commit)."""
        with self._renewing:  # a renewal between the read and the comparison would change the etag
            record, etag = self._read()
            mine = etag == self.etag
        if self.lost or record is None or record.holder != self.holder or not mine \
                or record.expires_at < self.clock():
            self.lost = True
            raise LeaseLost(f"the writer lease s3://{self.bucket}/{self.key} was taken over: "
                            "this batch is not committed")

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None
        if not self.lost and self.etag:  # expire it now (conditionally): the next loader need not wait
            self._put(0.0, IfMatch=self.etag)


class LocalLease:
    """An exclusive `flock` on `<path>`: one writer per table on this machine, released by the
    operating system when the process dies; the holder writes who it is into the file."""

    def __init__(self, path: str, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path, self.sleep, self.clock = path, sleep, clock
        self._fd: int | None = None
        self._waited: set[int] = set()

    def acquire(self, wait_seconds: float, role: str = "a loader") -> None:
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = self.clock() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                me = LeaseRecord(f"{socket.gethostname()}:{os.getpid()}", 0.0, role)
                os.ftruncate(fd, 0)
                os.pwrite(fd, me.to_json().encode(), 0)
                return
            except BlockingIOError:
                if self._fd is None and fd not in self._waited:
                    event(log, "lease_wait", lease=self.path, holder=self._holder())
                    self._waited.add(fd)
                if self.clock() >= deadline:
                    os.close(fd)
                    raise LeaseHeld(f"{self._holder()} holds the writer lock {self.path}; one writer "
                                    "per table keeps loads exactly once") from None
                self.sleep(0.5)

    def _holder(self) -> str:
        """Who holds the lock, as its holder wrote it (an older lakeinlet wrote nothing)."""
        try:
            with open(self.path) as f:
                return LeaseRecord.from_json(f.read()).who
        except (OSError, ValueError, KeyError):
            return "another writer on this machine"

    def check(self) -> None:
        if self._fd is None:
            raise LeaseLost(f"the writer lock {self.path} is not held")

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


@contextlib.contextmanager
def held(lease: Lease, wait_seconds: float, role: str = "a loader") -> Iterator[None]:
    """Hold `lease` as `role` for the block (re-entrant use is the caller's job: one `held` per run)."""
    lease.acquire(wait_seconds, role)
    try:
        yield
    finally:
        lease.release()
