"""Committed batches whose deletes (and poison moves) run on deleter threads while the next batch
fills, counted into the run's summary oldest first: the poll loop's acknowledging side."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import NamedTuple

from lakeinlet.sources.acks import Acker, AckResult
from lakeinlet.sources.batch import OpenBatch
from lakeinlet.sources.drain import DrainWatch
from lakeinlet.sources.poison import MoveResult, Poison, PoisonMover
from lakeinlet.sources.redelete import Leftovers
from lakeinlet.sources.summary import BatchOutcome, RunSummary

log = logging.getLogger(__name__)

DELETING_BATCHES = 2
"""Committed batches whose deletes may still run while the next one fills: more would only hold
more messages hidden when the deletes, not the receives, are what is slow."""


class _Deleting(NamedTuple):
    """A committed batch whose deletes (and poison moves) are under way."""

    batch: OpenBatch
    version: int | None
    open_s: float
    commit_s: float
    done: Future[tuple[AckResult, MoveResult, float]]


class Deletions:
    """Deletes each committed batch's messages and moves its poison on `DELETING_BATCHES` threads;
    a failed delete is left to `left` (`Leftovers`), poison moved back resets the `drain` watch."""

    def __init__(self, *, acker: Acker, mover: PoisonMover | None, left: Leftovers, drain: DrainWatch,
                 summary: RunSummary, clock: Callable[[], float], crash: Callable[[str], None]) -> None:
        self._acker, self._mover, self._left, self._drain = acker, mover, left, drain
        self._summary, self._clock, self._crash = summary, clock, crash
        self._deleter = ThreadPoolExecutor(DELETING_BATCHES, thread_name_prefix="lakeinlet-ack")
        self._deleting: deque[_Deleting] = deque()

    def __bool__(self) -> bool:
        """Whether a batch's deletes are still under way (or not counted yet)."""
        return bool(self._deleting)

    def submit(self, batch: OpenBatch, version: int | None, open_s: float, commit_s: float) -> None:
        """Start deleting a committed batch's messages (never before its commit)."""
        self._deleting.append(_Deleting(batch, version, open_s, commit_s,
                                        self._deleter.submit(self._delete, batch)))

    def _delete(self, batch: OpenBatch) -> tuple[AckResult, MoveResult, float]:
        """Delete a committed batch's messages and move its poison (a deleter thread)."""
        started = self._clock()
        acks = self._acker.delete(batch.ack)
        moves = self._move_poison(batch.poison)
        self._left.settled(batch.handles, acks)  # releases the others from the heartbeat
        return acks, moves, self._clock() - started

    def collect(self, keep: int) -> None:
        """Count the batches whose deletes are done, oldest first, waiting for the oldest while
        more than `keep` are still deleting."""
        while self._deleting and (self._deleting[0].done.done() or len(self._deleting) > keep):
            batch, version, open_s, commit_s, done = self._deleting.popleft()
            acks, moves, ack_s = done.result()
            self._crash("after_delete")
            self._summary.add(batch, BatchOutcome(version, acks, moves, open_s, commit_s, ack_s))
        self._left.retry(self._summary)  # when due: a failed delete is tried again (`Leftovers`)

    def settle(self) -> None:
        """At the end, failed or not: wait for every delete under way and count it."""
        while self._deleting:
            batch, version, open_s, commit_s, done = self._deleting.popleft()
            try:
                acks, moves, ack_s = done.result()
            except Exception as exc:  # the run's own failure, if any, is the one to report
                log.warning("deleting batch %s failed: %s", batch.poll_batch, exc)
                continue
            self._summary.add(batch, BatchOutcome(version, acks, moves, open_s, commit_s, ack_s))

    def shutdown(self) -> None:
        self._deleter.shutdown(wait=True)

    def _move_poison(self, poison: list[Poison]) -> MoveResult:
        if self._mover is None or not poison:
            return MoveResult()
        moves = self._mover.move(poison)
        if moves.returned:
            self._drain.reset()  # they are visible again: the drain must see them moved
        return moves
