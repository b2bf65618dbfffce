"""The heartbeat: extends the visibility of messages whose batch is still open or committing."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from lakeinlet.errors import LakeinletError
from lakeinlet.sources.ports import Queue, chunks

log = logging.getLogger(__name__)


class VisibilityKeeper:
    """Tracks held receipt handles and their deadlines; a thread extends those close to expiry.

    A message is extended to `visibility_timeout` from now once less than half of it is left.
    Handles that cannot be extended (already expired and received elsewhere) are dropped: their
    event may be ingested twice, which the changelog's deterministic event_id makes recognisable.
    """

    def __init__(self, queue: Queue, visibility_timeout: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._queue, self._timeout, self._clock = queue, visibility_timeout, clock
        self._held: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lakeinlet-heartbeat", daemon=True)
        self.extended = 0
        self.failed = 0

    def track(self, handles: Sequence[str], received_at: float) -> None:
        """Hold `handles`, received at monotonic time `received_at` (taken before the receive)."""
        with self._lock:
            for handle in handles:
                self._held[handle] = received_at + self._timeout

    def release(self, handles: Sequence[str]) -> None:
        with self._lock:
            for handle in handles:
                self._held.pop(handle, None)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _loop(self) -> None:
        tick = min(10.0, max(0.05, self._timeout / 6))
        while not self._stopped.wait(tick):
            self.extend_due()

    def extend_due(self) -> int:
        """Extend every held message with less than half its timeout left; returns how many."""
        now = self._clock()
        with self._lock:
            due = [h for h, deadline in self._held.items() if deadline - now <= self._timeout / 2]
        done = 0
        for chunk in chunks(due):
            try:
                failures = self._queue.change_visibility(chunk, self._timeout)
            except LakeinletError as exc:  # the next tick tries again while time is left
                log.warning("visibility extension failed: %s", exc)
                continue
            bad = {f.receipt_handle for f in failures}
            with self._lock:
                for handle in chunk:
                    if handle in bad:
                        self._held.pop(handle, None)
                    elif handle in self._held:
                        self._held[handle] = now + self._timeout
            done += len(chunk) - len(bad)
            self.failed += len(bad)
        self.extended += done
        return done
