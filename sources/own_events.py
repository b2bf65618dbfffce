"""Events under lakeinlet's own locations (its changelog, tables, ledgers...), acknowledged without a
row: at most one warning a minute, naming each location and its events since the last line."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable

from lakeinlet import logs

log = logging.getLogger(__name__)

OWN_EVENTS = "events under lakeinlet's own locations acknowledged without a row"
HINT = ("the bucket notification covers lakeinlet's own files: give it a prefix (or a bucket) that "
        "leaves the lake out")


class OwnEventLog:
    """Counts own events batch by batch; logs them when a minute has passed since its last line
    (a changelog fed its own commits would otherwise log on every batch, for ever)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, every: float = 60.0) -> None:
        self._clock, self._every = clock, every
        self._pending: Counter[str] = Counter()
        self._logged_at: float | None = None

    def add(self, own: Counter[str]) -> None:
        """Count one batch's own events (location → events); log if a line is due."""
        if not own:
            return
        self._pending.update(own)
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < self._every:
            return
        logs.event(log, OWN_EVENTS, logging.WARNING, locations=dict(self._pending), hint=HINT)
        self._pending.clear()
        self._logged_at = now
