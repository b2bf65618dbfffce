"""The commands of docs/deploy/standalone.md, run as written on a standalone cluster (two workers on
127.0.0.1) from a folder outside the checkout with the installed wheel, per target format: end to
end, an executor JVM killed during a load, the driver killed and the load run again. Rows exact."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from lakeinlet import jars
from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer, Stack, provision
from lakeinlet.dev.samples import SampleFile, make_files
from tests.cluster.conftest import Results, Row, Submitter
from tests.cluster.standalone import StandaloneCluster, _kill_group
from tests.cluster.target import LINEAGE, read_target
from tests.conftest import unique

# The first test also waits for the session's wheel venv, cluster and archive (minutes).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]
FORMATS = ("delta", "hudi", "iceberg")
BAD_LINE = b"this is not json"
WRITE_STARTED = "CodecPool: Got brand-new compressor"
"""An executor's log line once a Parquet write task runs (Spark's, Hudi's and Iceberg's writers all
compress through parquet-mr; nothing before the write does in a JSON load)."""
LEASE_SECONDS = "15"
"""Hudi's writer lease for the tier (env): a killed driver's lease blocks the rerun this long."""
TABLES = {"delta": "orders", "hudi": "orders_hudi", "iceberg": "orders_iceberg"}


@dataclass
class Lake:
    """One scenario's landing stack (bucket → queue), lake bucket and uploaded objects."""

    stack: Stack
    lake: str
    files: list[SampleFile]
    etags: dict[str, str]
    rest_uri: str = ""

    def variables(self) -> dict[str, str]:
        return {"QUEUE_URL": self.stack.queue_url, "BUCKET": self.stack.bucket, "LAKE": self.lake,
                "ICEBERG_CATALOG": "rest", "ICEBERG_CATALOG_URI": self.rest_uri,
                "LAKEINLET__HUDI__LEASE_SECONDS": LEASE_SECONDS}

    def table_uri(self, target_format: str) -> str:
        return f"s3://{self.lake}/{TABLES[target_format]}"


def new_lake(moto_server: MotoServer, request: pytest.FixtureRequest, target_format: str, files: int,
             rows: int, malformed: bool = False) -> Lake:
    """Upload `files` JSON sample files; `malformed` appends a line that is not JSON to the first
    (numbering it is the one Python task the loader runs on executors)."""
    stack = provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"))
    s3 = client("s3", AwsSection(endpoint_url=moto_server.endpoint))
    lake = unique("lake")
    s3.create_bucket(Bucket=lake)
    samples = make_files("json", files, rows)
    if malformed:
        samples[0] = replace(samples[0], body=samples[0].body + BAD_LINE + b"\n")
    etags = {f.key: s3.put_object(Bucket=stack.bucket, Key=f.key, Body=f.body)["ETag"].strip('"')
             for f in samples}
    rest = str(request.getfixturevalue("rest_catalog")) if target_format == "iceberg" else ""
    return Lake(stack, lake, samples, etags, rest)


def poll(submitter: Submitter, lake: Lake) -> None:
    done = submitter.run(submitter.flow.script(submitter.flow.poll), lake.variables())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def check_rows(lake: Lake, target_format: str, endpoint: str) -> int:
    """The target holds every uploaded row exactly once, with its lineage; returns the row count."""
    got = read_target(target_format, lake.table_uri(target_format), endpoint, lake.rest_uri)
    expected = sorted(r["order_id"] for f in lake.files for r in f.rows)
    assert got.num_rows, f"the {target_format} table {lake.table_uri(target_format)} holds no rows"
    assert sorted(got.column("order_id").to_pylist()) == expected
    missing = [c for c in LINEAGE if c not in got.column_names]
    assert not missing, f"lineage columns missing from the {target_format} table: {missing}"
    keys, etags = got.column("_source_key").to_pylist(), got.column("_source_etag").to_pylist()
    pairs = set(zip(keys, etags, strict=True))
    assert pairs == set(lake.etags.items())
    assert set(got.column("_source_bucket").to_pylist()) == {lake.stack.bucket}
    assert None not in got.column("_ingest_batch").to_pylist()
    assert None not in got.column("_source_event_time").to_pylist()
    return int(got.num_rows)


def python_workers(cluster: StandaloneCluster, app_ids: list[str]) -> int:
    """Python tasks the applications' executors ran (PythonRunner logs one `Times:` line per task)."""
    logs = [p for n in range(cluster.workers) for a in app_ids
            for p in (cluster.work_dir(n) / a).glob("*/stderr")]
    return sum(p.read_text(errors="replace").count("Times: total") for p in logs)


def apps_since(cluster: StandaloneCluster, before: set[str]) -> list[str]:
    apps = {p.name for n in range(cluster.workers) for p in cluster.work_dir(n).glob("app-*")}
    return sorted(apps - before)


def all_apps(cluster: StandaloneCluster) -> set[str]:
    return set(apps_since(cluster, set()))


def timed(step: Callable[[], None]) -> float:
    t0 = time.monotonic()
    step()
    return time.monotonic() - t0


def load(submitter: Submitter, lake: Lake, target_format: str, archive: bool) -> None:
    script = submitter.flow.script(submitter.flow.load(target_format, archive))
    done = submitter.run(script, lake.variables())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "loaded" in done.stdout, done.stdout[-3000:]


ONE_LINE = pytest.mark.skipif(jars.installed_line() != "3.5", reason="shipping a packed venv does not "
                              "depend on the Spark line: it runs once, on the 3.5 line")
ONE_OF_TWO = pytest.mark.skipif(jars.installed_line() != "3.5", reason="the 4.1 line runs one clean load "
                                "(Delta), and one kill (Iceberg) in `make test-all`; the 3.5 line every pair")


@pytest.mark.parametrize(("target_format", "archive"),
                         [pytest.param("delta", True, marks=ONE_LINE), ("delta", False), ("hudi", False),
                          pytest.param("iceberg", False, marks=ONE_OF_TWO)])
def test_end_to_end(target_format: str, archive: bool, submitter: Submitter, moto_server: MotoServer,
                    standalone: StandaloneCluster, results: Results, request: pytest.FixtureRequest) -> None:
    if archive:
        request.getfixturevalue("packed_env")
    lake = new_lake(moto_server, request, target_format, files=4, rows=5, malformed=archive)
    poll_s = timed(lambda: poll(submitter, lake))
    before = all_apps(standalone)
    load_s = timed(lambda: load(submitter, lake, target_format, archive))
    found = check_rows(lake, target_format, moto_server.endpoint)
    workers = python_workers(standalone, apps_since(standalone, before))
    if archive:  # a malformed line, numbered on the executors (in the JVM since dbde04d)
        quarantined = read_target("delta", f"{lake.table_uri('delta')}_quarantine", moto_server.endpoint)
        assert quarantined.column("record").to_pylist() == [BAD_LINE.decode()]
        assert quarantined.column("line").to_pylist() == [len(lake.files[0].rows) + 1]
    results.rows.append(Row(target_format, f"end to end ({'archive' if archive else 'venv path'})",
                            sum(len(f.rows) for f in lake.files), found, poll_s + load_s,
                            f"poll {poll_s:.1f} s + load {load_s:.1f} s; "
                            f"python tasks on executors: {workers}"))
    assert workers == 0, f"a {target_format} batch ran {workers} Python tasks on the executors"


def wait_for_write(cluster: StandaloneCluster, before: set[str], proc: subprocess.Popen[bytes],
                   timeout: float = 300) -> tuple[str, Path]:
    """(app id, executor folder) of the first executor of a new application to start a write task."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for app in apps_since(cluster, before):
            for n in range(cluster.workers):
                for log in (cluster.work_dir(n) / app).glob("*/stderr"):
                    if WRITE_STARTED in log.read_text(errors="replace"):
                        return app, log.parent
        time.sleep(0.2)
    raise AssertionError(f"no executor started a write within {timeout:.0f} s (load exit {proc.poll()})")


def kill_executor(cluster: StandaloneCluster, app: str, folder: Path) -> int:
    """SIGKILL the executor JVM running in `folder` (its worker's work folder for the app)."""
    pids = [pid for pid, _ in cluster.executors(app)
            if Path(f"/proc/{pid}/cwd").resolve() == folder.resolve()]
    assert len(pids) == 1, f"expected one executor of {app} in {folder}, found {pids}"
    os.kill(pids[0], signal.SIGKILL)
    return pids[0]


def wait_gone(cluster: StandaloneCluster, app: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while cluster.executors(app) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not cluster.executors(app), f"executors of {app} still run {timeout:.0f} s after its driver died"


@pytest.mark.parametrize("target_format", [pytest.param(f, marks=ONE_OF_TWO) if f == "delta" else
                                           pytest.param(f, marks=pytest.mark.test_all("4.1"))
                                           for f in FORMATS])
def test_driver_then_executor_killed_mid_write(target_format: str, submitter: Submitter,
                                               moto_server: MotoServer, standalone: StandaloneCluster,
                                               results: Results, tmp_path: Path,
                                               request: pytest.FixtureRequest) -> None:
    """The driver killed while a write task runs, then the same command again with one executor JVM
    killed while its write task runs: the master relaunches an executor, the task is retried, and the
    target holds every row exactly once."""
    lake = new_lake(moto_server, request, target_format, files=40, rows=200)
    expected = sum(len(f.rows) for f in lake.files)
    poll(submitter, lake)
    script = submitter.flow.script(submitter.flow.load(target_format, False))
    uri = lake.table_uri(target_format)

    before, t0 = all_apps(standalone), time.monotonic()
    proc = submitter.start(script, tmp_path / "driver-killed.log", lake.variables())
    app, _ = wait_for_write(standalone, before, proc)
    _kill_group(proc.pid)
    proc.wait(30)
    wait_gone(standalone, app)
    after_kill = read_target(target_format, uri, moto_server.endpoint, lake.rest_uri).num_rows
    assert after_kill in (0, expected), f"{after_kill} rows after the driver was killed: a partial commit"
    results.rows.append(Row(target_format, "driver SIGKILLed mid-write", 0, after_kill, time.monotonic() - t0,
                            "rows visible right after the kill (0: nothing committed)"))

    before, t0 = all_apps(standalone), time.monotonic()
    proc = submitter.start(script, tmp_path / "executor-killed.log", lake.variables())
    app, folder = wait_for_write(standalone, before, proc)
    rows_at_kill = read_target(target_format, uri, moto_server.endpoint, lake.rest_uri).num_rows
    kill_executor(standalone, app, folder)
    assert proc.wait(600) == 0, (tmp_path / "executor-killed.log").read_text()[-3000:]
    wall = time.monotonic() - t0
    executors = sorted({p.parent.name for n in range(standalone.workers)
                        for p in (standalone.work_dir(n) / app).glob("*/stderr")})
    assert len(executors) > standalone.workers, f"no executor relaunched after the kill: {executors}"
    found = check_rows(lake, target_format, moto_server.endpoint)
    results.rows.append(Row(target_format, "rerun, one executor SIGKILLed mid-write", expected, found, wall,
                            f"rows before the kill {rows_at_kill}; executors of the app: {len(executors)}"))
