"""Deleting a committed batch's messages: 10 per call, calls in parallel, failed entries retried."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from lakeinlet.errors import LakeinletError, TransientError
from lakeinlet.retry import transient
from lakeinlet.sources.ports import Message, Queue, chunks

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AckResult:
    """What a delete achieved: receipts deleted, receipts superseded by another receipt of the
    same message that was deleted, and descriptions of the entries left to redelivery."""

    deleted: int = 0
    superseded: int = 0
    failures: list[str] = field(default_factory=list)
    retriable: tuple[Message, ...] = ()
    """The messages left whose delete may succeed later (a failed call, a failure on the server
    side): their handle was not refused."""

    @property
    def acked(self) -> int:
        return self.deleted + self.superseded


class _EntriesFailed(TransientError):
    """Some entries of a delete call failed on the server side (the call itself succeeded)."""


class Acker:
    """Deletes receipt handles; entries that still fail after `attempts` are left to redelivery.

    Entries that failed on the server side are retried (`lakeinlet.retry`, pausing through
    `sleep`). Entries that failed through the sender's fault (e.g. ReceiptHandleIsInvalid: the
    message already came back and was received again) are not: the same call would fail again.
    Nor is a whole call that failed: the queue's client already retried it (botocore); such
    entries are `retriable`, and the poller deletes them again later (`redelete.Leftovers`).
    A message received twice (two receivers, or a redelivery within the batch) has two handles;
    once one of them is deleted the message is gone, so the other one's failure is no loss.
    """

    def __init__(self, queue: Queue, attempts: int = 3, parallel: int = 8,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._queue, self._attempts, self._sleep = queue, attempts, sleep
        self._pool = ThreadPoolExecutor(parallel, thread_name_prefix="lakeinlet-delete")

    def delete(self, messages: Sequence[Message]) -> AckResult:
        """Delete every receipt of `messages`; returns what was deleted and what was left."""
        handles = [m.receipt_handle for m in messages]
        failed = {h: (why, again) for part in self._pool.map(self._delete_chunk, chunks(handles))
                  for h, why, again in part}
        gone = {m.message_id for m in messages if m.receipt_handle not in failed}
        superseded = [m for m in messages if m.receipt_handle in failed and m.message_id in gone]
        left = [m for m in messages if m.receipt_handle in failed and m.message_id not in gone]
        return AckResult(len(messages) - len(failed), len(superseded),
                         [failed[m.receipt_handle][0] for m in left],
                         tuple(m for m in left if failed[m.receipt_handle][1]))

    def _delete_chunk(self, chunk: Sequence[str]) -> list[tuple[str, str, bool]]:
        """(handle, why, whether a later delete may succeed) of each entry left."""
        pending = {h: "not attempted" for h in chunk}
        final: list[tuple[str, str, bool]] = []

        def attempt() -> None:
            nonlocal pending
            failures = self._queue.delete(list(pending))
            final.extend((f.receipt_handle, f"{f.code}: {f.message}", False)
                         for f in failures if f.sender_fault)
            pending = {f.receipt_handle: f"{f.code}: {f.message}" for f in failures if not f.sender_fault}
            if pending:
                raise _EntriesFailed(f"{len(pending)} delete entries failed on the server side")

        try:
            transient(self._attempts, sleep=self._sleep, on=_EntriesFailed)(attempt)
        except _EntriesFailed:
            pass  # `pending` holds them, left to redelivery
        except LakeinletError as exc:  # the call itself failed, after the client's own retries
            log.warning("delete call failed: %s", exc)
            pending = dict.fromkeys(pending, f"delete call failed: {exc}")
        return final + [(h, why, True) for h, why in pending.items()]

    def close(self) -> None:
        self._pool.shutdown(wait=True)
