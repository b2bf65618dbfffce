"""The chaos supervisor and killer on plain processes: kills take the whole tree, and what dies
is restarted and counted."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from chaos.killer import Killer
from chaos.processes import Supervisor, log_events

pytestmark = pytest.mark.unit
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def wait_for(cond: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_a_kill_takes_the_whole_process_tree_and_the_job_comes_back(tmp_path: Path) -> None:
    child = tmp_path / "child.pid"
    tree = [sys.executable, "-c", "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', "
            f"'import time; time.sleep(60)']); open({str(child)!r}, 'w').write(str(p.pid)); "
            "time.sleep(60)"]
    sup = Supervisor(tmp_path / "logs", dict(os.environ))
    job = sup.add("loader-0", "loader", tree)
    wait_for(child.exists)
    grandchild = int(child.read_text())
    assert sup.kill("loader-0")
    wait_for(lambda: not _alive(grandchild))
    sup.tend()
    assert job.generation == 2 and sup.running("loader") == [job]
    assert [(k.name, k.kind) for k in sup.kills] == [("loader-0", "loader")] and not sup.exits
    sup.stop_all(sig=signal.SIGKILL)


def test_an_exit_is_counted_and_restarted_after_a_pause_and_once_jobs_stay_down(tmp_path: Path) -> None:
    sup = Supervisor(tmp_path / "logs", dict(os.environ))
    failing = sup.add("poller-0", "poller", [sys.executable, "-c", "raise SystemExit(3)"])
    once = sup.add("backfill-1", "backfill", [sys.executable, "-c", "pass"], once=True)
    wait_for(lambda: failing.proc is not None and failing.proc.poll() is not None
             and once.proc is not None and once.proc.poll() is not None)
    sup.tend()
    assert sup.exits == {"poller:3": 1, "backfill:0": 1}
    assert failing.generation == 1  # it died at once: restarted only after a pause
    sup.tend()
    assert sup.exits == {"poller:3": 1, "backfill:0": 1}  # counted once
    time.sleep(2.1)
    sup.tend()
    assert failing.generation == 2 and once.generation == 1 and not once.wanted
    sup.stop_all(sig=signal.SIGKILL)


def test_the_killer_kills_running_jobs_of_each_kind_at_their_own_pace(tmp_path: Path) -> None:
    sup = Supervisor(tmp_path / "logs", dict(os.environ))
    for name, kind in (("poller-0", "poller"), ("poller-1", "poller"), ("loader-0", "loader")):
        sup.add(name, kind, SLEEPER)
    sup.start_tending(0.05)
    killer = Killer(sup, {"poller": 0.2, "loader": 100.0}, random.Random(1))
    killer.start()
    time.sleep(2.0)
    killer.stop()
    sup.stop_tending()
    kinds = [k.kind for k in sup.kills]
    assert kinds.count("poller") >= 4 and "loader" not in kinds
    assert {k.name for k in sup.kills} == {"poller-0", "poller-1"}
    sup.stop_all(sig=signal.SIGKILL)


def test_log_events_reads_json_lines_and_skips_the_rest(tmp_path: Path) -> None:
    log = tmp_path / "a.1.log"
    log.write_text('{"event": "batch", "version": 3}\nplain text\n{"event": "cut by a ki\n')
    assert log_events([log]) == [{"event": "batch", "version": 3}]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
