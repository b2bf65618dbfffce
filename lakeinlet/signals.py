"""SIGTERM and SIGINT as a request to stop at the next safe point, for both jobs."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[], None], when: str) -> Iterator[None]:
    """While inside, SIGTERM/SIGINT call `stop` (after a log line saying `when` the job stops)
    instead of killing the process or raising KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be installed from the main thread
        return

    def handler(signum: int, _frame: object) -> None:
        log.warning("received %s: stopping %s", signal.Signals(signum).name, when)
        stop()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
