"""The job processes of a chaos run: started, killed with SIGKILL, restarted while wanted, and
counted (exit codes; output kept per generation, `<name>.<gen>.log`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

QUICK_EXIT_SECONDS = 5.0  # a job that died this soon after its start is restarted after a pause
RESTART_PAUSE_SECONDS = 2.0


@dataclass
class Job:
    """One supervised job and its current process."""

    name: str
    kind: str
    argv: list[str]
    proc: subprocess.Popen[bytes] | None = None
    generation: int = 0
    started_at: float = 0.0
    wanted: bool = True
    once: bool = False
    """Run once: its exit is counted, it is never restarted."""
    killed: bool = False
    not_before: float = 0.0


@dataclass(frozen=True)
class Kill:
    """One SIGKILL: when, which job, and how long its process had run."""

    at: float
    name: str
    kind: str
    age_seconds: float


@dataclass
class Supervisor:
    """Starts jobs, restarts the ones that die while wanted, and counts kills and exits."""

    log_dir: Path
    env: dict[str, str]
    jobs: dict[str, Job] = field(default_factory=dict)
    kills: list[Kill] = field(default_factory=list)
    exits: Counter[str] = field(default_factory=Counter)
    """`<kind>:<exit code>` of processes that ended without being killed by the supervisor."""
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def add(self, name: str, kind: str, argv: list[str], once: bool = False) -> Job:
        """Start a job now and keep it running until `stop` (`once`: never restart it)."""
        with self._lock:
            job = self.jobs[name] = Job(name, kind, argv, once=once)
            self._spawn(job)
            return job

    def _spawn(self, job: Job) -> None:
        job.generation += 1
        job.killed = False
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_dir / f"{job.name}.{job.generation}.log", "wb") as out:
            job.proc = subprocess.Popen(job.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                        start_new_session=True)
        job.started_at = time.monotonic()

    def running(self, kind: str) -> list[Job]:
        with self._lock:
            return [j for j in self.jobs.values() if j.kind == kind and j.wanted
                    and j.proc is not None and j.proc.poll() is None]

    def kill(self, name: str) -> bool:
        """SIGKILL the job's process group; False if it was not running. `tend` restarts it.

        Each job runs in its own session, so a kill takes its whole process tree at once (the
        Python driver, Spark's JVM and its Python workers): what a machine or container dying does.
        """
        with self._lock:
            job = self.jobs[name]
            if job.proc is None or job.proc.poll() is not None:
                return False
            _signal_group(job.proc, signal.SIGKILL)
            job.proc.wait()
            job.killed = True
            self.kills.append(Kill(time.time(), name, job.kind, time.monotonic() - job.started_at))
            return True

    def tend(self) -> None:
        """Restart every wanted job whose process ended, killed or exiting on its own (a fault it
        gave up on); count the exits it did not cause."""
        now = time.monotonic()
        with self._lock:
            for job in self.jobs.values():
                if not job.wanted or job.proc is None or job.proc.poll() is None:
                    continue
                if not job.killed and job.not_before <= job.started_at:
                    self.exits[f"{job.kind}:{job.proc.returncode}"] += 1
                    quick = now - job.started_at < QUICK_EXIT_SECONDS
                    job.not_before = now + (RESTART_PAUSE_SECONDS if quick else 0.0)
                    job.wanted = not job.once
                if job.wanted and now >= job.not_before:
                    self._spawn(job)

    def start_tending(self, every: float = 0.3) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._tend_loop, args=(every,), daemon=True,
                                        name="chaos-supervisor")
        self._thread.start()

    def _tend_loop(self, every: float) -> None:
        while not self._stop.wait(every):
            self.tend()

    def stop_tending(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def stop(self, name: str, sig: signal.Signals = signal.SIGTERM, timeout: float = 60.0) -> int | None:
        """Stop a job for good: `sig`, then SIGKILL after `timeout`; returns its exit code."""
        with self._lock:
            job = self.jobs[name]
            job.wanted = False
            proc = job.proc
        if proc is None or proc.poll() is not None:
            return None if proc is None else proc.returncode
        _signal_group(proc, sig)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            return proc.wait()

    def stop_all(self, kind: str | None = None, sig: signal.Signals = signal.SIGTERM,
                 timeout: float = 60.0) -> dict[str, int | None]:
        names = [n for n, j in self.jobs.items() if kind is None or j.kind == kind]
        return {n: self.stop(n, sig, timeout) for n in names}

    def logs(self, kind: str) -> list[Path]:
        """Every log file of every generation of the jobs of `kind`."""
        return sorted(p for j in self.jobs.values() if j.kind == kind
                      for p in self.log_dir.glob(f"{j.name}.*.log"))


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # the job leads its own session: its group id is its pid


def log_events(paths: Iterable[Path]) -> list[dict[str, object]]:
    """The JSON log lines (`--log-format json`) of the given files; other lines are skipped."""
    found = []
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    continue  # a line cut by a kill
    return found
