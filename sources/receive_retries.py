"""Receive failures shared by the poller's receivers: terminal when the queue was never reached in
time, else retried for ever and reported once a minute."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from lakeinlet.errors import TerminalError, TransientError

log = logging.getLogger(__name__)


class RetryReport:
    """Receive failures shared by the receivers: a queue never reached within `connect_timeout`
    is a terminal error; once reached, failures are retried for ever, logged once a minute."""

    def __init__(self, clock: Callable[[], float], connect_timeout: float) -> None:
        self._clock, self._timeout = clock, connect_timeout
        self._started, self._connected = clock(), False
        self._lock = threading.Lock()
        self._logged_at: float | None = None
        self._since_log = 0

    def succeeded(self) -> None:
        self._connected = True

    def failed(self, exc: TransientError) -> TerminalError | None:
        """Count a failure; the error to stop with when the queue was never reached in time."""
        now = self._clock()
        with self._lock:
            self._since_log += 1
            if not self._connected and now - self._started >= self._timeout:
                return TerminalError(f"no receive succeeded in {now - self._started:.0f} s "
                                     f"(--connect-timeout-seconds {self._timeout:g}): {exc}")
            if self._logged_at is None or now - self._logged_at >= 60:
                log.warning("receive failed %d time(s) since the last report, retrying: %s",
                            self._since_log, exc)
                self._logged_at, self._since_log = now, 0
        return None
