"""A stop whose pauses take no time but move its own clock: runs of `lakeinlet-load run
--continuous` driven through their pauses and retries without sleeping."""

from __future__ import annotations

from collections.abc import Callable

from lakeinlet.incremental.console import Stop


class Ticking(Stop):
    """Its pauses move `now` (noted in `pauses`); it is asked for after `pauses_allowed` pauses,
    or at the first pause where `until()` holds."""

    def __init__(self, pauses_allowed: int = 1000, until: Callable[[], object] = lambda: False) -> None:
        super().__init__()
        self.now, self.pauses, self.allowed, self.until = 0.0, list[float](), pauses_allowed, until

    def clock(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        if self.requested or self.until():
            self.requested = True
            return
        self.pauses.append(seconds)
        self.now += seconds
        self.requested = len(self.pauses) >= self.allowed
