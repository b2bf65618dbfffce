"""A poller (a process) and a `--continuous` loader (in this process, on the shared Spark session)
on the emulator, after a known workload: both endpoints serve every metric docs/reference/metrics.md
lists, with the counts of what was uploaded, /healthz answers 200, and the idle loader logs where it
caught up. One format: the metrics do not depend on it."""

from __future__ import annotations

import argparse
import logging
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import Stack
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.commands.run import cmd_run
from lakeinlet.incremental.console import Stop
from lakeinlet.incremental.settings import LoaderConfig, ReadSection, RunSection, TablesSection
from lakeinlet.logs import fields_of
from lakeinlet.metrics import MetricsSection
from lakeinlet.spark import SparkSection
from tests.spark.loader_helpers import parts
from tests.unit.test_health import free_port, get

pytestmark = pytest.mark.spark
DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "metrics.md"


def documented() -> list[str]:
    return re.findall(r"^\| `(lakeinlet_\w+)` \|", DOC.read_text(encoding="utf-8"), re.M)


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one series of a scrape (labels in the order prometheus_client writes them)."""
    shown = "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else ""
    found = re.search(rf"^{re.escape(name + shown)} (\S+)$", text, re.M)
    assert found, f"{name}{shown} not in the scrape"
    return float(found[1])


def wait_for(url: str, name: str, value: float, **labels: str) -> str:
    """Scrape until the series holds `value` (60 s at most: the workload's own pace)."""
    deadline, text = time.monotonic() + 60, ""
    while time.monotonic() < deadline:
        code, text = get(url)
        if code == 200 and f"{name}" in text:
            try:
                if sample(text, name, **labels) == value:
                    return text
            except AssertionError:
                pass
        time.sleep(0.3)
    raise AssertionError(f"{name}{labels} never reached {value}:\n{text}")


def poller(stack: Stack, changelog: str, port: int, alive: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lakeinlet.sources", "--queue-url", stack.queue_url, "--changelog", changelog,
         "--endpoint-url", stack.endpoint, "--bucket", stack.bucket, "--wait-seconds", "1",
         "--receivers", "1",
         "--batch-seconds", "1", "--metrics-port", str(port), "--health-file", str(alive)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def loader_config(stack: Stack, aws: AwsSection, tmp_path: Path, port: int) -> LoaderConfig:
    return LoaderConfig(
        tables=TablesSection(changelog=str(tmp_path / "cl"), table=str(tmp_path / "orders")),
        read=ReadSection(source_format="parquet", schema=SCHEMA_DDL), run=RunSection(interval_seconds=0.3),
        spark=SparkSection(master="local[2]"), aws=aws,
        metrics=MetricsSection(port=port, health_seconds=60, idle_log_seconds=0.5))


def test_both_endpoints_serve_every_documented_metric_after_a_known_workload(
        spark: Any, stack: Stack, aws: AwsSection, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    files = make_files("parquet", 3, rows_per_file=4)
    s3 = client("s3", aws)
    for f in files:
        s3.put_object(Bucket=stack.bucket, Key=f.key, Body=f.body)
    poll_port, load_port, alive = free_port(), free_port(), tmp_path / "poller.alive"
    proc = poller(stack, str(tmp_path / "cl"), poll_port, alive)
    try:
        polled = wait_for(f"http://127.0.0.1:{poll_port}/metrics", "lakeinlet_poller_events_written_total", 3)
        p = parts(loader_config(stack, aws, tmp_path, load_port), spark)
        try:
            loaded, health = run_loader(p, load_port, caplog)
        finally:
            p.close()
        assert get(f"http://127.0.0.1:{poll_port}/healthz")[0] == 200 and alive.exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert health[0] == 200
    scraped = polled + loaded
    print("\n".join(line for line in scraped.splitlines() if line.startswith("lakeinlet_")))  # the figures
    served = re.findall(r"^# TYPE (lakeinlet_\w+) ", scraped, re.M)
    assert sorted(set(served)) == sorted(documented())  # every one documented is served, and back
    assert (sample(polled, "lakeinlet_poller_messages_received_total"),
            sample(polled, "lakeinlet_poller_acknowledged_without_row_total", reason="skipped"),
            sample(polled, "lakeinlet_poller_receivers")) == (4, 1, 1)  # 3 puts + s3:TestEvent
    assert sample(polled, "lakeinlet_poller_changelog_version") >= 0
    assert sample(polled, "lakeinlet_poller_batch_commit_seconds_count") >= 1
    assert sample(polled, "lakeinlet_poller_receive_errors_total") == 0
    route = {"route": ""}
    assert sample(loaded, "lakeinlet_loader_rows_total", **route) == 12
    assert sample(loaded, "lakeinlet_loader_objects_total", **route, status="loaded") == 3
    assert sample(loaded, "lakeinlet_loader_read_bytes_total", **route) == sum(len(f.body) for f in files)
    batches = sample(loaded, "lakeinlet_loader_batches_total", **route)
    assert batches >= 1
    assert sample(loaded, "lakeinlet_loader_batch_seconds_count", **route, step="total") == batches
    assert (sample(loaded, "lakeinlet_loader_lag_versions", **route),
            sample(loaded, "lakeinlet_loader_lag_events", **route),
            sample(loaded, "lakeinlet_loader_lag_bytes", **route)) == (0, 0, 0)
    assert 0 <= sample(loaded, "lakeinlet_loader_freshness_seconds", **route) < 600
    assert sample(loaded, "lakeinlet_loader_drain_failures_total", **route) == 0
    idle = [fields_of(r) for r in caplog.records if r.getMessage() == "idle"]
    head = sample(loaded, "lakeinlet_loader_changelog_head_version", **route)
    assert idle and idle[0]["caught_up_at_version"] == head


def run_loader(p: Any, port: int, caplog: pytest.LogCaptureFixture) -> tuple[str, tuple[int, str]]:
    """A --continuous run in a thread until it caught up, logged an idle line and was scraped."""
    stop = Stop()
    args = argparse.Namespace(continuous=True, drain=False)
    thread = threading.Thread(target=cmd_run, args=(p, args, stop), daemon=True)
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        thread.start()
        try:
            url = f"http://127.0.0.1:{port}/metrics"
            wait_for(url, "lakeinlet_loader_rows_total", 12, route="")
            wait_for(url, "lakeinlet_loader_lag_events", 0, route="")
            deadline = time.monotonic() + 30
            while not any(r.getMessage() == "idle" for r in caplog.records) and time.monotonic() < deadline:
                time.sleep(0.2)
            text, health = get(url)[1], get(f"http://127.0.0.1:{port}/healthz")
        finally:
            stop.requested = True  # the pause between drains is 0.3 s: the run ends after it
            thread.join(60)
    return text, health
