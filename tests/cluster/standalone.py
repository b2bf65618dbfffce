"""A Spark standalone cluster on 127.0.0.1 started from the pyspark installation's own classes:
one master, workers of one core each, every process in its own process group, all stopped at the end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from lakeinlet.dev.emulator import free_port

SPARK_HOME = Path(pyspark.__file__).resolve().parent
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"


def loopback_env() -> dict[str, str]:
    """The daemons' environment: loopback only, Spark from this pyspark, no inherited Spark settings."""
    drop = ("SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_GATEWAY_PORT")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return env | {"SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1",
                  "SPARK_MASTER_HOST": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}


@dataclass
class StandaloneCluster:
    """One master and `workers` workers (`cores` cores, `memory` each) under `root` (outside the checkout)."""

    root: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    java_options: str = ""
    """The daemons' JVM options (SPARK_DAEMON_JAVA_OPTS)."""
    master_port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.master_port}"

    def work_dir(self, n: int) -> Path:
        return self.root / f"worker-{n}"

    def _spawn(self, name: str, args: list[str]) -> None:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 (kept open for the daemon's life)
        self.procs.append(subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], stdout=log,
                                           stderr=subprocess.STDOUT,
                                           env=loopback_env() | {"SPARK_DAEMON_JAVA_OPTS": self.java_options},
                                           start_new_session=True, cwd=self.root))

    def start(self, timeout: float = 90.0) -> StandaloneCluster:
        """Start master and workers; return once every worker has registered with the master.

        Raises:
            RuntimeError: a daemon exited, or the workers did not all register within `timeout`.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        self._spawn("master", [MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.master_port),
                               "--webui-port", str(self.ui_port)])
        for n in range(self.workers):
            self.work_dir(n).mkdir(exist_ok=True)
            self._spawn(f"worker-{n}", [WORKER_CLASS, "--host", "127.0.0.1", "--port", str(free_port()),
                                        "--webui-port", str(free_port()), "--cores", str(self.cores),
                                        "--memory", self.memory, "--work-dir", str(self.work_dir(n)),
                                        self.url])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if dead := [p.args for p in self.procs if p.poll() is not None]:
                self.stop()
                raise RuntimeError(f"a Spark daemon exited at start ({dead}); see the logs in {self.root}")
            if len(self.alive_workers()) == self.workers:
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{self.workers} workers did not register with {self.url} in {timeout:.0f} s; "
                           f"see the logs in {self.root}")

    def state(self) -> dict[str, object]:
        """The master's JSON view (workers, active and completed applications)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json", timeout=5) as resp:
            return dict(json.load(resp))

    def alive_workers(self) -> list[dict[str, object]]:
        try:
            workers = list(self.state().get("workers", []))  # type: ignore[call-overload]
        except OSError:  # the master's UI is not up yet
            return []
        return [w for w in workers if isinstance(w, dict) and w.get("state") == "ALIVE"]

    def executors(self, app_id: str | None = None) -> list[tuple[int, str]]:
        """(pid, command line) of the executor JVMs running on this machine (of `app_id` if given)."""
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink(proc / "cwd")  # a worker runs each executor in its own work folder
            except OSError:
                continue
            if EXECUTOR_CLASS in cmd and cwd.startswith(str(self.root)) and (app_id is None or app_id in cmd):
                found.append((int(proc.name), cmd))
        return found

    def prune(self, keep: tuple[str, ...] = ("stdout", "stderr")) -> int:
        """Delete what finished applications' executors fetched (the jars, the venv archive: hundreds
        of MB an executor), keeping their logs for the tests that read them; return the bytes freed."""
        try:
            running = {a.get("id") for a in self.state().get("activeapps", [])}  # type: ignore[attr-defined]
        except OSError:  # the master is gone: nothing runs
            running = set()
        freed = 0
        for n in range(self.workers):
            for app in self.work_dir(n).glob("app-*"):
                if app.name in running:
                    continue
                for entry in (e for executor in app.iterdir() if executor.is_dir()
                              for e in executor.iterdir() if e.name not in keep):
                    if entry.is_dir() and not entry.is_symlink():
                        freed += sum(f.lstat().st_size for f in entry.rglob("*"))
                        shutil.rmtree(entry, ignore_errors=True)
                    else:
                        freed += entry.lstat().st_size
                        entry.unlink(missing_ok=True)
        return freed

    def stop(self) -> None:
        """Kill every daemon's process group (the workers' executors are their children)."""
        for pid, _ in self.executors():
            _kill_group(pid)
        for proc in reversed(self.procs):
            _kill_group(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(15)
        self.procs.clear()


def _kill_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.5)
