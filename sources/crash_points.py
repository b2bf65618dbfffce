"""Crash points for tests: a hook the poller calls at each named step, raising where a test says
the process "dies" (`before_commit`, `after_commit`, `after_delete`)."""

from __future__ import annotations

from collections.abc import Callable


class InjectedCrash(RuntimeError):
    """Raised by a crash point in tests: the process "dies" at a named step."""


def crash_at(step: str) -> Callable[[str], None]:
    """A crash hook that raises InjectedCrash when the poller reaches `step`
    (`before_commit`, `after_commit`, `after_delete`)."""
    def hook(reached: str) -> None:
        if reached == step:
            raise InjectedCrash(f"injected crash at {step}")
    return hook
