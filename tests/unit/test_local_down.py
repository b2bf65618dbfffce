"""`lakeinlet local down` stops only the moto server `local up` recorded (pid, start time and command
line), never whatever process now holds that pid."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeinlet.dev import emulator
from lakeinlet.dev.cli import main

pytestmark = pytest.mark.unit


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        emulator.stop_process(proc, grace_seconds=5)


def _start(processes: list[subprocess.Popen[bytes]], *args: str) -> subprocess.Popen[bytes]:
    """A sleeping Python in a session of its own (as `local up` starts moto), with `args` after it."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", *args],
                            start_new_session=True)
    processes.append(proc)
    return proc


def _record(state: Path, pid: int, identity: str | None) -> None:
    state.mkdir(exist_ok=True)
    (state / "local.json").write_text(json.dumps({"pid": pid, "identity": identity, "stack": {}}))


def test_a_pid_that_names_another_process_is_not_killed(
        tmp_path: Path, processes: list[subprocess.Popen[bytes]], capsys: pytest.CaptureFixture[str]) -> None:
    other = _start(processes, "someone-elses-job")
    _record(tmp_path, other.pid, f"Mon Jan  1 00:00:00 2024 python -m {emulator.MODULE} -H 127.0.0.1 -p 5000")
    assert main(["local", "down", "--state-dir", str(tmp_path)]) == 2
    assert other.poll() is None  # still running
    assert "is not the moto server" in capsys.readouterr().err
    assert (tmp_path / "local.json").exists()


def test_a_state_file_without_the_servers_identity_stops_nothing(
        tmp_path: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    other = _start(processes, "-m", emulator.MODULE)  # looks like moto, but up never recorded it
    _record(tmp_path, other.pid, None)
    assert main(["local", "down", "--state-dir", str(tmp_path)]) == 2
    assert other.poll() is None


def test_the_recorded_server_is_stopped(tmp_path: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    server = _start(processes, "-m", emulator.MODULE, "-H", "127.0.0.1", "-p", "5000")
    identity = emulator.process_identity(server.pid)
    assert emulator.is_moto(identity)
    _record(tmp_path, server.pid, identity)
    assert main(["local", "down", "--state-dir", str(tmp_path)]) == 0
    assert server.wait(timeout=30) is not None
    assert not (tmp_path / "local.json").exists()


def test_a_server_already_gone_clears_the_record(
        tmp_path: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    gone = _start(processes, "-m", emulator.MODULE)
    identity = emulator.process_identity(gone.pid)
    emulator.stop_process(gone, grace_seconds=5)
    _record(tmp_path, gone.pid, identity)
    assert main(["local", "down", "--state-dir", str(tmp_path)]) == 0
    assert not (tmp_path / "local.json").exists()
