"""The `[metrics]` settings both jobs share, and their endpoint: `/metrics` (Prometheus text) and
`/healthz` (the heartbeat's verdict) on --metrics-port, or a push to a gateway after a one-shot run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Gauge,
    disable_created_metrics,
    generate_latest,
    push_to_gateway,
)

from lakeinlet import logs
from lakeinlet.config import setting
from lakeinlet.errors import ConfigError
from lakeinlet.health import Heartbeat

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetricsSection:
    """Metrics and health: a Prometheus endpoint, a push gateway, a heartbeat file for probes."""

    port: int = setting(0, "Serve /metrics (Prometheus) and /healthz on this port while the job runs "
                        "(0: off).", flag="--metrics-port", metavar="PORT")
    host: str = setting("127.0.0.1", "Address the metrics port binds (0.0.0.0 for a probe or scraper "
                        "from outside the host or pod).", flag="--metrics-host", metavar="ADDR")
    push_gateway: str | None = setting(
        None, "Prometheus push gateway (host:port or URL) the run's metrics are pushed to when it "
        "ends: for one-shot runs no scraper would catch.", flag="--metrics-push-gateway", metavar="URL")
    health_file: str | None = setting(
        None, "File touched after every pass of the job's loop (the poller's receive loop, the loader's "
        "drain rounds and batches), idle or not: a liveness probe checks its age.", metavar="PATH")
    health_seconds: float = setting(
        600.0, "/healthz answers 503 once the loop has not passed for this long; it must exceed the "
        "longest batch and the loader's --interval-seconds, or a busy loop reads as stuck.", metavar="S")
    idle_log_seconds: float = setting(
        300.0, "While nothing new arrives, one `idle` log line this often (0: none), so the logs "
        "show the loop alive.", metavar="S")

    def validate(self) -> list[str]:
        problems = []
        if not 0 <= self.port <= 65535:
            problems.append(f"--metrics-port: expected 0 (off) to 65535, found {self.port}")
        if self.health_seconds <= 0 or self.idle_log_seconds < 0:
            problems.append(f"--health-seconds ({self.health_seconds:g}) must be above 0 and "
                            f"--idle-log-seconds ({self.idle_log_seconds:g}) not below 0")
        return problems

    def heartbeat(self) -> Heartbeat:
        return Heartbeat(self.health_file, self.health_seconds, self.idle_log_seconds)


def registry_of(heart: Heartbeat) -> CollectorRegistry:
    """A registry for one run's metrics (not prometheus_client's process-wide one: two runs in one
    process, as in the tests, count apart), holding the heartbeat's age."""
    disable_created_metrics()  # no `_created` twin of every counter: nothing here reads them
    registry = CollectorRegistry()
    Gauge("lakeinlet_heartbeat_age_seconds", "Seconds since the job's loop last passed (/healthz "
          "answers 503 above --health-seconds)", registry=registry).set_function(
        lambda: heart.verdict().age_seconds)
    return registry


def handler(registry: CollectorRegistry, heart: Heartbeat) -> type[BaseHTTPRequestHandler]:
    """The endpoint's two pages; anything else is 404."""
    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/healthz":
                verdict = heart.verdict()
                self._send(200 if verdict.healthy else 503, verdict.line().encode() + b"\n", "text/plain")
            elif path == "/metrics":
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            else:
                self._send(404, b"not found: /metrics or /healthz\n", "text/plain")

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Probes ask every few seconds: no line per request."""

    return Pages


@contextmanager
def serving(section: MetricsSection, registry: CollectorRegistry, heart: Heartbeat,
            job: str) -> Iterator[None]:
    """The endpoint while the body runs (with --metrics-port), then the push (--metrics-push-gateway).

    Raises:
        ConfigError: the port cannot be bound (in use, or a privileged one).
    """
    server = _bind(section, registry, heart) if section.port else None
    if server:
        threading.Thread(target=server.serve_forever, daemon=True, name="lakeinlet-metrics").start()
        logs.event(log, "metrics endpoint", url=f"http://{section.host}:{server.server_port}/metrics")
    try:
        yield
    finally:
        if server:
            server.shutdown()
            server.server_close()
        if section.push_gateway:
            _push(section.push_gateway, registry, job)


def _bind(section: MetricsSection, registry: CollectorRegistry, heart: Heartbeat) -> ThreadingHTTPServer:
    try:
        return ThreadingHTTPServer((section.host, section.port), handler(registry, heart))
    except OSError as exc:
        raise ConfigError([f"--metrics-port {section.port} on {section.host}: cannot listen ({exc}); "
                           "pick a free port or stop what holds it"]) from exc


def _push(gateway: str, registry: CollectorRegistry, job: str) -> None:
    """One push; a failure is logged, never the run's outcome."""
    try:
        push_to_gateway(gateway, job=job, registry=registry)
    except OSError as exc:
        logs.event(log, "metrics push failed", level=logging.WARNING, gateway=gateway, error=str(exc))
