"""A job loop's heartbeat: each pass (idle or not) is recorded and touches --health-file, `/healthz`
judges the age of the last pass, and while nothing new arrives one `idle` line is logged every few
minutes, so a probe and the logs both tell a stuck loop from an idle one."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakeinlet import logs
from lakeinlet.errors import ConfigError

log = logging.getLogger(__name__)
TOUCH_EVERY = 1.0
"""Seconds between two touches of the health file at most (the poller's loop passes 5 times a
second; a probe reads the file's age in seconds)."""


@dataclass(frozen=True)
class Verdict:
    """What `/healthz` answers: whether the loop passed within the bound, and how long ago."""

    healthy: bool
    age_seconds: float
    bound_seconds: float

    def line(self) -> str:
        state = "ok" if self.healthy else "stalled"
        return (f"{state}: the loop last passed {self.age_seconds:.1f} s ago (bound "
                f"{self.bound_seconds:g} s, --health-seconds)")


class Heartbeat:
    """The loop's last pass, its file, and the idle line."""

    def __init__(self, path: str | None, bound: float, idle_every: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """Touches `path` once at once (raises ConfigError naming it when it cannot be written)."""
        self.path, self.bound, self.idle_every, self._clock = path, bound, idle_every, clock
        self.last = self._moved = self._idle_logged = clock()
        self._mark: object = None
        self._touched, self._failed = self.last, False
        if path:
            try:
                Path(path).touch()
            except OSError as exc:
                raise ConfigError([f"--health-file {path}: cannot be written ({exc}); give a path in a "
                                   "writable folder (e.g. /tmp/lakeinlet.alive)"]) from exc

    def beat(self, mark: object, idle: Callable[[], dict[str, Any]] = dict) -> None:
        """One pass of the loop. `mark` changes when the loop did work (batches so far); `idle`
        gives the idle line's fields, and is called only when that line is due."""
        now = self.last = self._clock()
        if mark != self._mark:
            self._mark, self._moved, self._idle_logged = mark, now, now
        elif self.idle_every and now - self._idle_logged >= self.idle_every:
            self._idle_logged = now
            logs.event(log, "idle", idle_seconds=round(now - self._moved), **idle())
        if self.path and now - self._touched >= TOUCH_EVERY:
            self._touched = now
            self._touch()

    def _touch(self) -> None:
        try:
            Path(str(self.path)).touch()
        except OSError as exc:  # the probe then sees a stale file, which is what it should see
            if not self._failed:
                logs.event(log, "health file failed", level=logging.WARNING, path=self.path, error=str(exc))
            self._failed = True

    def verdict(self) -> Verdict:
        age = self._clock() - self.last
        return Verdict(age <= self.bound, age, self.bound)
