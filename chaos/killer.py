"""The killer: SIGKILLs a random running job of each kind at random instants, so a kill lands
anywhere in a job's life (start-up, receiving, mid-commit, between batches), never at a named step."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping

from chaos.processes import Supervisor


class Killer:
    """Kills on its own thread until `stop`; `supervisor` restarts what it kills.

    Args:
        mean_seconds: job kind → mean seconds between two kills of that kind. Loaders start a JVM,
            pollers do not, so loaders get a far longer mean: a loader killed every few seconds
            would never get past its start-up.
        rng: the run's seeded generator for the instants and victims.
    """

    def __init__(self, supervisor: Supervisor, mean_seconds: Mapping[str, float], rng: random.Random) -> None:
        self.supervisor, self.mean, self.rng = supervisor, dict(mean_seconds), rng
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chaos-killer", daemon=True)
        self._due: dict[str, float] = {}

    def start(self) -> None:
        now = time.monotonic()
        self._due = {kind: now + self._interval(kind) for kind in self.mean}
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _interval(self, kind: str) -> float:
        """Uniformly between 0.25 and 1.75 times the kind's mean."""
        return self.mean[kind] * self.rng.uniform(0.25, 1.75)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            now = time.monotonic()
            for kind, due in list(self._due.items()):
                if now >= due:
                    self.kill_one(kind)
                    self._due[kind] = now + self._interval(kind)

    def kill_one(self, kind: str) -> bool:
        """SIGKILL one running job of `kind` chosen at random; False if none was running."""
        victims = sorted(self.supervisor.running(kind), key=lambda j: j.name)
        if not victims:
            return False
        return self.supervisor.kill(self.rng.choice(victims).name)
