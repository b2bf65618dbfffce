"""The poll loop: receivers → one changelog commit per batch → deletes, pure orchestration over
`ports`. A message is deleted only after the commit holding its rows succeeded, a poison message
only after its copy reached the DLQ (`poison="dlq"`): docs/concepts/guarantees.md. A batch's deletes
run while the next batch fills (`deleting`); the receivers' count follows the backlog (`scaling`)."""

from __future__ import annotations

import logging
import queue as stdlib_queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.sources.acks import Acker
from lakeinlet.sources.batch import OpenBatch
from lakeinlet.sources.deleting import DELETING_BATCHES, Deletions
from lakeinlet.sources.drain import DrainWatch
from lakeinlet.sources.envelopes import EventFilter
from lakeinlet.sources.own_events import OwnEventLog
from lakeinlet.sources.poison import Poison, PoisonMover, RateLimitedLog
from lakeinlet.sources.ports import Changelog, DeadLetterQueue, Message, Queue
from lakeinlet.sources.receive_retries import RetryReport
from lakeinlet.sources.redelete import Leftovers
from lakeinlet.sources.scaling import ReceiverScaler
from lakeinlet.sources.summary import RunSummary
from lakeinlet.sources.visibility import VisibilityKeeper

__all__ = ["Poller", "PollerSettings", "RetryReport", "RunSummary"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PollerSettings:
    """The poller's knobs (built from `SourceConfig`; see its docs for the effects)."""

    source_id: str = "lakeinlet"
    wait_seconds: int = 20
    visibility_timeout: int = 120
    receivers: int = 4
    max_receivers: int = 0
    """Receivers a backlog may add up to (`ReceiverScaler`); at most `receivers` means none."""
    batch_size: int = 1000
    batch_seconds: float = 10.0
    until_empty: bool = False
    drain_wait_seconds: int = 1
    delete_attempts: int = 3
    poison: str = "redrive"
    poison_log_per_minute: int = 10
    connect_timeout: float = 60.0
    event_filter: EventFilter = field(default_factory=EventFilter)

    @property
    def receivers_ceiling(self) -> int:
        return max(self.receivers, self.max_receivers)

    @property
    def receive_wait(self) -> int:
        """Long-poll wait per receive: draining waits at most `drain_wait_seconds`, so the run
        ends about that long after the queue is empty instead of a full `wait_seconds`."""
        if self.until_empty:
            return min(self.wait_seconds, self.drain_wait_seconds)
        return self.wait_seconds


class Poller:
    """Receives from `queue`, commits each batch to `changelog`, then deletes its messages."""

    def __init__(self, *, queue: Queue, changelog: Changelog, settings: PollerSettings,
                 dlq: DeadLetterQueue | None = None, clock: Callable[[], float] = time.monotonic,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC),
                 crash: Callable[[str], None] = lambda step: None) -> None:
        """`dlq` is where poison messages are moved with `settings.poison == "dlq"` (required
        then; raises TerminalError without it)."""
        self._queue, self._changelog, self.settings = queue, changelog, settings
        self._clock, self._now, self._crash = clock, now, crash
        self._keeper = VisibilityKeeper(queue, settings.visibility_timeout, clock)
        ceiling = settings.receivers_ceiling
        # A delete call acks what one receive brought: as many in flight as receives keeps up.
        self._acker = Acker(queue, settings.delete_attempts, parallel=max(8, ceiling))
        self._left = Leftovers(self._acker, self._keeper, settings.delete_attempts, clock)
        self._scaler = ReceiverScaler(settings.receivers, ceiling, clock)
        self._receivers: list[threading.Thread] = []
        self._mover = self._poison_mover(dlq)
        self._poison_log = RateLimitedLog(log, "poison", settings.poison_log_per_minute, clock)
        self._own_log = OwnEventLog(clock)
        depth = max(4, settings.batch_size // 10 + 2 * ceiling)
        self._inbox: stdlib_queue.Queue[tuple[list[Message], datetime]] = stdlib_queue.Queue(depth)
        self._stop, self._receiving, self._closing = threading.Event(), threading.Event(), threading.Event()
        self._lock, self._drain = threading.Lock(), DrainWatch(settings.receivers)
        self._failure: BaseException | None = None
        self._retries = RetryReport(clock, settings.connect_timeout)
        self._run_id, self._seq = f"{now().strftime('%Y%m%dT%H%M%SZ')}-{uuid.uuid4().hex[:6]}", 0
        self.summary = RunSummary()
        self._deleting = Deletions(acker=self._acker, mover=self._mover, left=self._left, drain=self._drain,
                                   summary=self.summary, clock=clock, crash=crash)

    def _poison_mover(self, dlq: DeadLetterQueue | None) -> PoisonMover | None:
        if self.settings.poison != "dlq":
            return None
        if dlq is None:
            raise TerminalError("poison='dlq' needs a dead-letter queue to move poison messages to")
        return PoisonMover(self._queue, dlq, self._acker)

    def stop(self) -> None:
        """Ask the poller to stop (signal-safe): receiving stops, the open batch is committed."""
        self._stop.set()

    def run(self) -> RunSummary:
        """Poll until stopped, drained (`until_empty`) or failed.

        Raises:
            TerminalError: the queue or changelog refused for good (after committing what it can).
            InjectedCrash: from a crash hook (`crash_points`, tests).
        """
        started = self._clock()
        self._receiving.set()
        self._keeper.start()
        self._spawn(self._scaler.target)
        try:
            batch = self._loop(self._new_batch())
            self._finish(batch)
        finally:
            self._receiving.clear()
            self._closing.set()
            for thread in self._receivers:
                thread.join(self.settings.receive_wait + 5)
            try:
                self._deleting.settle()
            finally:
                self._deleting.shutdown()
                self._keeper.stop()
                self._acker.close()
                self._poison_log.flush()
                self.summary.poison_log_suppressed = self._poison_log.suppressed
                self.summary.receivers_max = self._scaler.most
                self.summary.seconds = round(self._clock() - started, 3)
        if self._failure is not None:
            raise self._failure
        return self.summary

    def _new_batch(self) -> OpenBatch:
        self._seq += 1
        return OpenBatch(f"{self._run_id}-{self._seq:06d}", self.settings.event_filter)

    def _spawn(self, wanted: int) -> None:
        """Start receiver threads up to `wanted`; those above the scaler's target sit idle."""
        while len(self._receivers) < wanted:
            thread = threading.Thread(target=self._receive_loop, args=(len(self._receivers),),
                                      daemon=True, name=f"lakeinlet-receiver-{len(self._receivers)}")
            self._receivers.append(thread)
            thread.start()

    def _loop(self, batch: OpenBatch) -> OpenBatch:
        s = self.settings
        while not self._stop.is_set() and self._failure is None:
            self._spawn(self._scaler.tick())
            self._deleting.collect(DELETING_BATCHES)
            left = batch.seconds_left(self._clock(), s.batch_seconds)
            batch = self._take(batch, 0.2 if left is None else max(0.001, min(left, 0.2)))
            if batch.due(self._clock(), s.batch_size, s.batch_seconds):
                batch = self._close(batch)
            elif s.until_empty and self._drained():
                if not (batch.poison and self._mover):
                    break
                batch = self._close(batch)  # moves them now; one that failed comes back
        return batch

    def _take(self, batch: OpenBatch, timeout: float) -> OpenBatch:
        """Add what one receive brought to the batch, closing it whenever it fills up."""
        try:
            messages, received_at = self._inbox.get(timeout=timeout)
        except stdlib_queue.Empty:
            return batch
        for msg in messages:
            now = self._clock()
            poison = batch.add(msg, received_at, now)
            if poison is not None:
                self._on_poison(poison)
            if batch.due(now, self.settings.batch_size, float("inf")):
                batch = self._close(batch)
        return batch

    def _on_poison(self, poison: Poison) -> None:
        msg = poison.message
        if self._mover is None:
            self._keeper.release([msg.receipt_handle])  # let it expire: SQS redrives it
        action = "moving to the DLQ" if self._mover else "left to the queue's redrive policy"
        self._poison_log.event("poison", logging.WARNING, message_id=msg.message_id,
                               receive_count=msg.receive_count, error=poison.error, action=action)

    def _drained(self) -> bool:
        """Every receiver saw the queue empty, nothing waits in the inbox, and every delete (and
        poison move, which may put messages back) is done, a failed one deleted (`Leftovers`)."""
        return self._drain.drained() and self._inbox.empty() and not self._deleting and not self._left

    def _finish(self, batch: OpenBatch) -> None:
        """Stop receiving and commit the open batch with what the inbox holds, at once; then
        wait for the receivers' last long polls and commit what they bring in one more batch."""
        self._receiving.clear()
        while not self._inbox.empty():
            batch = self._take(batch, 0.001)
        if batch.messages:
            batch = self._close(batch)
        while any(t.is_alive() for t in self._receivers) or not self._inbox.empty():
            batch = self._take(batch, 0.05)
        if batch.messages:
            self._close(batch)
        self._deleting.collect(0)
        self._left.settle(self.summary)

    def _receive_loop(self, receiver: int) -> None:
        s, failures = self.settings, 0
        while self._receiving.is_set():
            if receiver >= self._scaler.target:  # not wanted now: no calls until it is again
                self._closing.wait(0.1)
                continue
            started = self._clock()
            try:
                messages = self._queue.receive(10, s.receive_wait, s.visibility_timeout)
                failures = 0
                self._retries.succeeded()
            except TransientError as exc:
                failures += 1
                if gave_up := self._retries.failed(exc):
                    self._fail(gave_up)
                    return
                self._stop.wait(min(30.0, 0.5 * 2 ** failures))
                continue
            except BaseException as exc:
                self._fail(exc)
                return
            self._keeper.track([m.receipt_handle for m in messages], started)
            self._hand_over(receiver, messages)

    def _hand_over(self, receiver: int, messages: list[Message]) -> None:
        """Pass received messages to the batcher; after an empty receive while draining, wait
        until another receiver brings messages (or receiving stops) instead of polling again.

        Only the `receivers` always polling count for the drain: one added for a backlog stops
        at its first empty receive (the scaler's target drops back), so it never holds."""
        self._scaler.received(len(messages))
        steady = receiver < self.settings.receivers
        if steady or messages:
            self._drain.record(receiver, len(messages))
        if messages:
            self._put((messages, self._now()))
        elif self.settings.until_empty and steady:
            self._drain.hold(receiver, self._receiving.is_set)

    def _put(self, item: tuple[list[Message], datetime]) -> None:
        while not self._closing.is_set():  # backpressure while the batcher commits; the
            try:                               # heartbeat keeps these messages hidden meanwhile
                self._inbox.put(item, timeout=0.2)
                return
            except stdlib_queue.Full:
                self._scaler.pushed_back()

    def _fail(self, exc: BaseException) -> None:
        log.debug("receiver stopped: %s", exc)  # the job reports the failure once, not per receiver
        with self._lock:
            self._failure = self._failure or exc
        self._stop.set()

    def _close(self, batch: OpenBatch) -> OpenBatch:
        """Commit the batch's rows (one commit), then start deleting its messages: never the
        reverse. Returns the next (empty) batch; the deletes run while it fills."""
        t0 = self._clock()
        self._own_log.add(batch.own)
        self._crash("before_commit")
        version = None
        try:
            if batch.rows:
                version = self._changelog.append(batch.rows, self._metadata(batch))
        except BaseException:
            self._keeper.release(batch.handles)  # left unacked: they come back after the timeout
            raise
        self._crash("after_commit")
        self.summary.commit_conflicts = int(getattr(self._changelog, "conflicts", 0))
        self._deleting.submit(batch, version, t0 - (batch.opened_at or t0), self._clock() - t0)
        self._deleting.collect(DELETING_BATCHES)
        return self._new_batch()

    def _metadata(self, batch: OpenBatch) -> dict[str, str]:
        return {"source_id": self.settings.source_id, "poll_batch": batch.poll_batch,
                "batch_seq": str(self._seq), "messages": str(batch.messages),
                "rows": str(len(batch.rows))}
