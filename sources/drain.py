"""When drain-and-stop may stop: every receiver has seen an empty receive after the last message."""

from __future__ import annotations

import threading
from collections.abc import Callable


class DrainWatch:
    """Tracks which receivers had an empty receive since the last receive that brought messages.

    A long poll returns as soon as a message is visible, so an empty receive that ended after the
    last messages were received says the queue was empty when it ended (messages another receiver
    still holds in an unfinished call are taken in before the run stops). Every receiver must see
    it: one empty answer from a queue spread over many servers is not enough. A receiver that has
    seen it `hold`s until another one brings messages, so none is still long-polling at the end.
    """

    def __init__(self, receivers: int) -> None:
        self._receivers = receivers
        self._empty: set[int] = set()
        self._cond = threading.Condition()

    def record(self, receiver: int, messages: int) -> None:
        """Report what one receive call of `receiver` brought."""
        with self._cond:
            if messages:
                self._empty.clear()
            else:
                self._empty.add(receiver)
            self._cond.notify_all()

    def reset(self) -> None:
        """Forget the empty receives seen so far (messages are known to be coming back)."""
        with self._cond:
            self._empty.clear()
            self._cond.notify_all()

    def hold(self, receiver: int, running: Callable[[], bool]) -> None:
        """Block `receiver` while its empty receive still counts (another receive would only
        wait), until messages arrive elsewhere or `running()` turns false (checked every 0.1 s)."""
        with self._cond:
            while receiver in self._empty and running():
                self._cond.wait(0.1)

    def drained(self) -> bool:
        """True once every receiver saw an empty receive since the last messages arrived."""
        with self._cond:
            return len(self._empty) >= self._receivers
