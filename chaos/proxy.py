"""`FaultProxy`: mitmdump in reverse mode on a loopback port, in front of the emulator; the jobs
point AWS_ENDPOINT_URL (or the s3a endpoint) at `FaultProxy.endpoint`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from chaos.fault_log import FaultRecord, read_fault_log
from chaos.plan import FaultPlan
from lakeinlet.dev.emulator import free_port, stop_process

MITMPROXY_VERSION = "11.0.2"  # the newest release for Python 3.11; tested with it
ADDON = Path(__file__).with_name("addon.py")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore HTTP_PROXY


def default_venv() -> Path:
    """$LAKEINLET_FAULTS_VENV, else `.venv-faults` at the root of the lakeinlet checkout."""
    return Path(os.environ.get("LAKEINLET_FAULTS_VENV") or Path(__file__).parents[1] / ".venv-faults")


def ensure_mitmproxy(venv: Path | None = None, python: str = sys.executable) -> Path:
    """Create `venv` with the pinned mitmproxy unless it is there; return mitmdump's path.

    mitmproxy gets a virtualenv of its own because it pins many packages that must not meet
    lakeinlet's; the addon it runs therefore imports no lakeinlet code, only this package's
    stdlib-only modules, by path.

    Raises:
        subprocess.CalledProcessError: venv creation or pip failed (pip needs PyPI).
    """
    venv = venv or default_venv()
    mitmdump, stamp = venv / "bin" / "mitmdump", venv / ".mitmproxy-version"
    if mitmdump.exists() and stamp.exists() and stamp.read_text() == MITMPROXY_VERSION:
        return mitmdump
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    (venv / ".gitignore").write_text("*\n")  # keeps the checkout's `git status` clean
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                    f"mitmproxy=={MITMPROXY_VERSION}"], check=True)
    stamp.write_text(MITMPROXY_VERSION)
    return mitmdump


class FaultProxy:
    """A fault-injecting reverse proxy on 127.0.0.1, as a context manager.

    Why a proxy: moto and community LocalStack have no S3/SQS fault API and kernel-level faults
    (tc netem) are unavailable here, so faults are injected on the wire; a reverse proxy reached
    through the endpoint URL serves every client alike: boto3 (job 1), delta-rs (changelog and
    Delta commits) and Spark's s3a (job 2). Why mitmproxy (PyPI, maintained): it can answer, drop,
    delay or cut each request from a small addon script and, unlike a TCP-level tool such as
    Toxiproxy (no package here; built with `go install`), sees HTTP: it tells a DeleteMessageBatch
    from a ReceiveMessage and a Delta commit PUT from a data-file PUT, and can forward a request so
    the emulator APPLIES it and then fail the answer (the uncertain outcomes). botocore's
    before-send event and hadoop-aws's fault-injecting client each reach one client only, and
    never an applied-but-failed request.

    Args:
        upstream_endpoint: the emulator, e.g. http://127.0.0.1:5000.
        plan: the faults; replaceable at runtime with `set_plan`.
        seed: makes probabilistic faults replayable.
        log_path: the fault log (JSON lines, appended; read with `faults()`). mitmdump's own
            output goes next to it, to `<log_path>.mitmdump`.
        mitmdump: the executable (default: `ensure_mitmproxy()`).
        delay_ms: every request is held this long before it is forwarded or answered (an added
            network round trip; other requests go on meanwhile); replaceable with `set_delay`.
    """

    def __init__(self, upstream_endpoint: str, plan: FaultPlan, seed: int, log_path: str | Path,
                 *, mitmdump: Path | None = None, port: int = 0, delay_ms: int = 0) -> None:
        self.upstream = upstream_endpoint.rstrip("/")
        self.plan, self.seed, self.log_path = plan, seed, Path(log_path)
        self.delay_ms = delay_ms
        self.port = port or free_port()
        self._mitmdump = mitmdump
        self._proc: subprocess.Popen[bytes] | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def endpoint(self) -> str:
        """The URL clients use instead of the emulator's."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> FaultProxy:
        """Start mitmdump and wait until its control endpoint answers.

        Raises:
            RuntimeError: mitmdump exited or did not answer within `timeout` seconds.
        """
        self._tmp = tempfile.TemporaryDirectory(prefix="lakeinlet-faults-")
        config = Path(self._tmp.name) / "config.json"
        config.write_text(json.dumps({"plan": self.plan.to_dict(), "seed": self.seed,
                                      "log_path": str(self.log_path.resolve()),
                                      "delay_ms": self.delay_ms}))
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{self.log_path}.mitmdump", "ab") as out:
            self._proc = subprocess.Popen(self._command(config), stdout=out, stderr=out,
                                          start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"mitmdump exited with code {self._proc.returncode}; see "
                                   f"{self.log_path}.mitmdump")
            try:
                self.stats()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"fault proxy did not answer on {self.endpoint} in {timeout}s")

    def _command(self, config: Path) -> list[str]:
        assert self._tmp
        return [str(self._mitmdump or ensure_mitmproxy()), "--mode", f"reverse:{self.upstream}",
                "--listen-host", "127.0.0.1", "--listen-port", str(self.port), "-q",
                "-s", str(ADDON), "--set", f"faults_config={config}",
                "--set", f"confdir={self._tmp.name}",  # its CA files stay out of ~/.mitmproxy
                "--set", "keep_host_header=true",  # the emulator sees the Host the client signed
                "--set", "connection_strategy=lazy"]  # reset_before never opens an upstream socket

    @property
    def pid(self) -> int | None:
        """mitmdump's process id while it runs (benchmarks read its CPU time)."""
        return self._proc.pid if self._proc and self._proc.poll() is None else None

    def stop(self) -> None:
        stop_process(self._proc)
        if self._tmp:
            self._tmp.cleanup()
            self._tmp = None

    def _control(self, action: str = "", method: str = "GET", body: bytes | None = None) -> Any:
        url = f"{self.endpoint}/__faults__" + (f"/{action}" if action else "")
        with _NO_PROXY.open(urllib.request.Request(url, body, method=method), timeout=10) as answer:
            return json.loads(answer.read())

    def stats(self) -> dict[str, Any]:
        """Live counters of the current plan: requests by operation, faults by `operation/kind`.

        Operations are counted under their classified name: a DeltaCommit is not also a PutObject.
        Also: `enabled`, `seed`, `total_faults`, `generation`, `seq` (requests since start),
        `delay_ms`, and the requests in flight (arrived, not yet answered) since the plan was set:
        `in_flight` now, `in_flight_max`, and `in_flight_seconds`, their count integrated over
        time (its growth over a window divided by the window's seconds is the mean in flight), and
        `spans`: per operation, `first` (its first arrival) and `last` (its last answer), in the
        proxy's monotonic seconds, with `first_area` and `last_area`, `in_flight_seconds` then.
        """
        return dict(self._control())

    def enable(self, on: bool = True) -> None:
        """Switch faults on or off at runtime (off lets the system converge)."""
        self._control("enable" if on else "disable", "POST", b"")

    def set_delay(self, delay_ms: int) -> None:
        """Hold every request `delay_ms` from now on (0: none)."""
        self.delay_ms = delay_ms
        self._control("delay", "PUT", json.dumps({"delay_ms": delay_ms}).encode())

    def set_plan(self, plan: FaultPlan, seed: int | None = None) -> None:
        """Replace the plan (and seed); counters restart and the log's generation goes up by one."""
        self.plan, self.seed = plan, self.seed if seed is None else seed
        self._control("plan", "PUT", json.dumps({"plan": plan.to_dict(), "seed": self.seed}).encode())

    def faults(self, all_generations: bool = False) -> list[FaultRecord]:
        """The fault log's records (of the current plan only, unless `all_generations`)."""
        records = read_fault_log(self.log_path)
        if all_generations or not records:
            return records
        current = self.stats()["generation"] if self._proc and self._proc.poll() is None else max(
            r.generation for r in records)
        return [r for r in records if r.generation == current]

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
