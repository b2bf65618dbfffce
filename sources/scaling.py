"""How many receivers poll at once: `--receivers` always, more up to `--max-receivers` while a
backlog keeps the receives full and each step up raises the rate (a slow network, not a busy
server, is what holds the receives back)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class ReceiverScaler:
    """Decides the number of receivers from what the receives bring, one window at a time.

    Each receive call waits a round trip whatever the server's speed, so over a slow network
    one receiver brings little however deep the queue is; more receivers in flight at once
    multiply the rate until the server or the changelog is what limits it. No latency is
    measured for that: a step up is kept only when the next window's rate is `gain` times the
    rate before it, so a server already at its limit (where more receivers only queue) goes back
    down and is probed again after `hold` seconds.

    Up only from a backlog: in a window whose receives brought at least `full_share` of ten
    messages a call on average, that pushed nothing back (`pushed_back`: the batcher's buffer
    was full), and held enough calls to judge (two per receiver). Down to `floor` at once on an
    empty receive, to `floor` after a window of part-filled receives, and to the step before when
    the step did not pay; a window that pushed back keeps the count.
    """

    def __init__(self, floor: int, ceiling: int, clock: Callable[[], float], *, window: float = 1.0,
                 gain: float = 1.15, hold: float = 10.0, full_share: float = 0.9) -> None:
        self.floor, self.ceiling = floor, max(floor, ceiling)
        self._clock, self._window, self._gain, self._hold = clock, window, gain, hold
        self._full_share = full_share
        self._lock = threading.Lock()
        self.target = floor
        self.most = floor
        self._step_from: tuple[int, float] | None = None  # (receivers, rate) before the last step up
        self._hold_until = 0.0
        self._reset(clock())

    def _reset(self, now: float) -> None:
        self._started, self._calls, self._messages, self._pushed = now, 0, 0, False

    def received(self, messages: int) -> None:
        """One receive call brought `messages` (receiver threads call this)."""
        with self._lock:
            self._calls += 1
            self._messages += messages
            if messages == 0 and self.target > self.floor:
                self.target, self._step_from = self.floor, None
                self._reset(self._clock())

    def pushed_back(self) -> None:
        """A receiver found the batcher's buffer full: receiving is not what limits the rate."""
        with self._lock:
            self._pushed = True

    def tick(self) -> int:
        """Close the window once it is due; returns the receivers wanted from now on."""
        with self._lock:
            now = self._clock()
            elapsed = now - self._started
            if self.ceiling == self.floor or elapsed < self._window or self._calls < 2 * self.target:
                return self.target
            rate = self._messages / elapsed
            full = self._messages >= self._full_share * 10 * self._calls
            if not full:
                self.target, self._step_from = self.floor, None  # part-filled: no backlog left
            elif self._step_from is not None and (
                    self._pushed or rate < self._step_from[1] * self._gain):
                self.target, self._step_from = self._step_from[0], None  # the step did not pay
                self._hold_until = now + self._hold
            else:
                self._step_from = None
                if not self._pushed and now >= self._hold_until and self.target < self.ceiling:
                    self._step_from = (self.target, rate)
                    self.target = min(self.ceiling, 2 * self.target)
                    self.most = max(self.most, self.target)
            self._reset(now)
            return self.target
