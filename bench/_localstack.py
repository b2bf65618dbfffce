"""LocalStack for the benchmarks: its own virtualenv (Python 3.13+), started on 127.0.0.1 only
(with `GATEWAY_SERVER=hypercorn`: without it LocalStack listens on 0.0.0.0 whatever GATEWAY_LISTEN
says)."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

PACKAGES = ["localstack-core[runtime]==2026.3.0", "cbor2<6", "pyopenssl<25", "cryptography<45",
            "service-identity"]


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        major, minor = out.split()
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def find_python(minimum: tuple[int, int] = (3, 13)) -> tuple[str | None, str]:
    """The newest interpreter at least `minimum` ($LAKEINLET_PY312, PATH, pyenv versions), and
    what was found (for the message when none fits).

    localstack-core 2026.3.0 imports `warnings.deprecated`, new in Python 3.13: a 3.12 starts
    but finds no runtime components, so 3.13 is the working minimum here.
    """
    names = [os.environ.get("LAKEINLET_PY312", ""), *(shutil.which(n) or "" for n in
             ("python3.14", "python3.13", "python3.12", "python3"))]
    names += glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    found = {p: v for p in filter(None, names) if (v := _version(p))}
    fit = sorted(((v, p) for p, v in found.items() if v >= minimum), reverse=True)
    seen = ", ".join(sorted({f"{v[0]}.{v[1]}" for v in found.values()})) or "none"
    return (fit[0][1] if fit else None), seen


def ensure_venv(root: Path) -> Path:
    """The venv's python, creating the venv and installing LocalStack on first use.

    Raises:
        RuntimeError: no Python 3.12+ was found, or the installation failed.
    """
    python = root / "bin" / "python"
    check = [str(python), "-c", "import localstack.aws.components, rolo, moto"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    base, seen = find_python()
    if base is None:
        raise RuntimeError(f"LocalStack needs Python 3.13 or newer (3.12 lacks warnings.deprecated, "
                           f"which localstack-core 2026.3.0 imports); found Python {seen} "
                           "($LAKEINLET_PY312, python3.x on PATH, ~/.pyenv/versions)")
    print(f"creating {root} with {base} and installing {' '.join(PACKAGES)} (one-off)...", flush=True)
    subprocess.run([base, "-m", "venv", "--clear", str(root)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES])
    if done.returncode != 0:
        raise RuntimeError(f"pip install of LocalStack into {root} failed")
    return python


def venv_or_skip(work: Path, what: str) -> Path | None:
    """The LocalStack venv's python under `work` (created on first use), or None after printing
    why `what` is skipped (no Python 3.13+, or the install failed)."""
    work.mkdir(exist_ok=True)
    (work / ".gitignore").write_text("*\n")
    try:
        return ensure_venv(work / "localstack-venv")
    except RuntimeError as exc:
        print(f"SKIPPED {what}: {exc}")
        return None


class ServerProcess:
    """A server the benchmarks start on 127.0.0.1:`port`: its endpoint and the CPU it used."""

    def __init__(self, port: int, log: Path) -> None:
        self.port, self.log = port, log
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system, its waited-for children included) the server used so far."""
        assert self._proc is not None
        fields = Path(f"/proc/{self._proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc: object) -> None:
        """Stops the server's process group: SIGTERM, then SIGKILL after 30 s."""
        if self._proc and self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait()


class LocalStack(ServerProcess):
    """LocalStack serving s3, sqs, sns, iam, sts on 127.0.0.1:`port`, as a context manager."""

    def __init__(self, python: Path, port: int, log: Path) -> None:
        super().__init__(port, log)
        self.python = python

    def __enter__(self) -> LocalStack:
        env = os.environ | {"SERVICES": "s3,sqs,sns,iam,sts", "GATEWAY_SERVER": "hypercorn",
                            "GATEWAY_LISTEN": f"127.0.0.1:{self.port}", "PERSISTENCE": "0",
                            "LOCALSTACK_VOLUME_DIR": str(self.log.parent / "localstack-volume")}
        out = open(self.log, "ab")  # closed when the process ends
        self._proc = subprocess.Popen([str(self.python), "-m", "localstack.runtime.main"], env=env,
                                      stdout=out, stderr=out, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"LocalStack exited with {self._proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/_localstack/health", timeout=2) as r:
                    if b'"sqs"' in r.read():
                        return self
            except OSError:
                time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"LocalStack did not answer on {self.endpoint} in 120 s; see {self.log}")
