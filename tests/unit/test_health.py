"""The heartbeat (file, idle line, verdict) and the endpoint's /healthz and /metrics: a wedged poll
loop turns /healthz 503 once the bound passes while an idle one stays 200 (a manual clock decides
the ages; the test waits on the loop's own passes, never on wall time)."""

from __future__ import annotations

import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lakeinlet.errors import ConfigError
from lakeinlet.health import Heartbeat
from lakeinlet.logs import fields_of
from lakeinlet.metrics import MetricsSection, registry_of, serving
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.metrics import PollerCollector, beating
from lakeinlet.sources.poller import Poller
from tests.fakes import MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except urllib.error.URLError as exc:  # not listening (yet): a process still starting
        return 0, str(exc.reason)


def test_idle_lines_every_few_minutes_file_touched_and_verdict(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    clock, alive = Clock(), tmp_path / "alive"
    heart = Heartbeat(str(alive), bound=10, idle_every=300, clock=clock)
    assert alive.exists()  # touched at start: a probe passes before the first pass ends
    heart.beat(1)
    alive.unlink()
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        for now, mark in ((100, 1), (301, 1), (400, 1), (601, 1), (700, 2), (990, 2)):
            clock.now = now
            heart.beat(mark, lambda: {"caught_up_at_version": 7})
    idle = [fields_of(r) for r in caplog.records if r.getMessage() == "idle"]
    assert idle == [{"idle_seconds": 301, "caught_up_at_version": 7},
                    {"idle_seconds": 601, "caught_up_at_version": 7}]  # none once batch 2 came
    assert alive.exists()
    assert heart.verdict().healthy
    clock.now = 1001
    assert heart.verdict().line() == "stalled: the loop last passed 11.0 s ago (bound 10 s, --health-seconds)"


def test_an_unwritable_health_file_is_one_config_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        Heartbeat(str(tmp_path / "no" / "such" / "alive"), 10, 300)
    assert caught.value.problems[0].startswith(f"--health-file {tmp_path}/no/such/alive: cannot be written")


def _poller(queue: InMemoryQueue, changelog: MemoryChangelog, clock: Clock) -> tuple[Poller, Heartbeat]:
    heart = Heartbeat(None, bound=5, idle_every=0, clock=clock)
    poller = Poller(queue=queue, changelog=changelog, settings=settings(until_empty=False, batch_size=1),
                    beat=beating(heart))
    return poller, heart


class StuckChangelog(MemoryChangelog):
    """A commit that blocks until released: the loop stops passing."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def append(self, rows: list, metadata: dict[str, str]) -> int:  # type: ignore[type-arg]
        self.entered.set()
        self.release.wait(30)
        return super().append(rows, metadata)


def test_healthz_is_503_for_a_wedged_loop_and_200_for_an_idle_one() -> None:
    clock, port = Clock(), free_port()
    stuck_queue, idle_queue = InMemoryQueue(), InMemoryQueue()
    stuck_queue.send_batch([s3_body("k0")])
    stuck_log = StuckChangelog()
    stuck, stuck_heart = _poller(stuck_queue, stuck_log, clock)
    idle, idle_heart = _poller(idle_queue, MemoryChangelog(), clock)
    other = free_port()
    registry = registry_of(stuck_heart)
    registry.register(PollerCollector(stuck.summary))
    threads = [threading.Thread(target=p.run, daemon=True) for p in (stuck, idle)]
    with serving(MetricsSection(port=port), registry, stuck_heart, "t"), \
            serving(MetricsSection(port=other), registry_of(idle_heart), idle_heart, "t"):
        for t in threads:
            t.start()
        assert stuck_log.entered.wait(30)
        clock.now = 6.0  # past the 5 s bound for both
        deadline = time.monotonic() + 30  # bounded: a loop that never passes fails below, not hangs
        while idle_heart.last < 6.0 and time.monotonic() < deadline:
            threading.Event().wait(0.05)
        assert get(f"http://127.0.0.1:{port}/healthz") == (
            503, "stalled: the loop last passed 6.0 s ago (bound 5 s, --health-seconds)\n")
        code, text = get(f"http://127.0.0.1:{other}/healthz")
        assert code == 200 and text.startswith("ok: the loop last passed 0.0 s ago")
        metrics = get(f"http://127.0.0.1:{port}/metrics")[1]
        assert "lakeinlet_heartbeat_age_seconds 6.0" in metrics
        assert "lakeinlet_poller_receivers 2.0" in metrics
        assert get(f"http://127.0.0.1:{port}/other")[0] == 404
        stuck_log.release.set()
        stuck.stop()
        idle.stop()
        for t in threads:
            t.join(30)
    assert stuck.summary.rows == 1


def test_a_one_shot_run_pushes_its_metrics_and_a_failed_push_is_one_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    got: list[tuple[str, str, bytes]] = []

    class Gateway(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            got.append((self.command, self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    gateway = ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
    threading.Thread(target=gateway.serve_forever, daemon=True).start()
    heart = Heartbeat(None, 10, 0)
    try:
        with serving(MetricsSection(push_gateway=f"127.0.0.1:{gateway.server_port}"), registry_of(heart),
                     heart, "lakeinlet-load"):
            pass
    finally:
        gateway.shutdown()
        gateway.server_close()
    [(verb, path, body)] = got
    assert (verb, path) == ("PUT", "/metrics/job/lakeinlet-load")
    assert b"lakeinlet_heartbeat_age_seconds" in body
    nobody = MetricsSection(push_gateway=f"127.0.0.1:{free_port()}")
    with caplog.at_level(logging.WARNING, logger="lakeinlet"), \
            serving(nobody, registry_of(heart), heart, "x"):
        pass
    [warned] = [fields_of(r) for r in caplog.records if r.getMessage() == "metrics push failed"]
    assert "Connection refused" in warned["error"]


def test_a_port_in_use_and_a_bound_below_the_pause_are_one_line_each() -> None:
    from lakeinlet.incremental.settings import LoaderConfig, RunSection, TablesSection

    heart = Heartbeat(None, 10, 0)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(ConfigError) as caught, serving(MetricsSection(port=port), registry_of(heart),
                                                            heart, "x"):
            pass
    assert caught.value.problems[0].startswith(f"--metrics-port {port} on 127.0.0.1: cannot listen (")
    config = LoaderConfig(tables=TablesSection(changelog="cl", table="t"),
                          run=RunSection(interval_seconds=60), metrics=MetricsSection(health_seconds=30))
    assert config.validate() == ["--health-seconds (30) must exceed --interval-seconds (60): an idle "
                                 "loader beats once a drain"]
