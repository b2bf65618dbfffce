"""Deleting a committed batch's messages: 10 per call, calls in parallel, failed entries retried."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from lakeinlet.errors import LakeinletError
from lakeinlet.sources.ports import Queue, chunks

log = logging.getLogger("lakeinlet.sources.acks")


class Acker:
    """Deletes receipt handles; what still fails after `attempts` is left to redelivery.

    Entries that failed through the sender's fault (e.g. ReceiptHandleIsInvalid: the message
    already came back and was received again) are not retried: the same call would fail again.
    """

    def __init__(self, queue: Queue, attempts: int = 3, parallel: int = 8) -> None:
        self._queue, self._attempts = queue, attempts
        self._pool = ThreadPoolExecutor(parallel, thread_name_prefix="lakeinlet-delete")

    def delete(self, handles: Sequence[str]) -> tuple[int, list[str]]:
        """Delete `handles`; returns (deleted count, descriptions of the entries left behind)."""
        results = list(self._pool.map(self._delete_chunk, chunks(list(handles))))
        left = [f for failed in results for f in failed]
        return len(handles) - len(left), left

    def _delete_chunk(self, chunk: Sequence[str]) -> list[str]:
        pending = {h: "not attempted" for h in chunk}
        final: list[str] = []
        for attempt in range(1, self._attempts + 1):
            try:
                failures = self._queue.delete(list(pending))
            except LakeinletError as exc:  # the whole call failed: retry it, then give up
                log.warning("delete call failed (attempt %d/%d): %s", attempt, self._attempts, exc)
                pending = dict.fromkeys(pending, f"delete call failed: {exc}")
                continue
            final += [f"{f.code}: {f.message}" for f in failures if f.sender_fault]
            pending = {f.receipt_handle: f"{f.code}: {f.message}" for f in failures if not f.sender_fault}
            if not pending:
                break
        return final + list(pending.values())

    def close(self) -> None:
        self._pool.shutdown(wait=True)
