"""The operator notebooks, executed with nbclient, checked by what they print: each in its demo on
the emulator, and each pointed at a pipeline this module sets up (papermill's parameter injection,
or the jobs' environment variables), where they must show that pipeline's numbers and change nothing.

Each notebook runs in a kernel of THIS interpreter (a kernelspec installed into a temp prefix), its
cells must run without error, and the JSON summary its last cell prints is checked. Whatever the
kernel started (moto, Spark's JVM) and left running is killed by pid afterwards.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer, provision
from lakeinlet.dev.samples import SCHEMA_DDL, make_files, upload
from lakeinlet.sources.job import main as poll
from tests.conftest import unique

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
KERNEL = "lakeinlet-notebook-test"
CELL_TIMEOUT = 600  # the first Spark read on a loaded 2-core machine has taken 140 s

pytestmark = pytest.mark.notebooks


@pytest.fixture(scope="session")
def kernel_specs(tmp_path_factory: pytest.TempPathFactory) -> KernelSpecManager:
    """A kernelspec of this interpreter in a temp prefix: never a `python3` found elsewhere."""
    prefix = tmp_path_factory.mktemp("jupyter")
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix),
                    "--name", KERNEL], check=True, capture_output=True)
    specs = KernelSpecManager(kernel_dirs=[str(prefix / "share" / "jupyter" / "kernels")],
                              ensure_native_kernel=False)
    assert specs.get_kernel_spec(KERNEL).argv[0] == sys.executable
    return specs


@pytest.fixture
def kernel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the kernel inherits: headless matplotlib, Spark on loopback with this Python and jars."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
    monkeypatch.setenv("LAKEINLET_JARS", os.environ.get("LAKEINLET_JARS", str(ROOT / ".jars")))
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)


class Descendants:
    """Processes the kernel started, remembered after each cell so they can be ended by pid."""

    def __init__(self) -> None:
        self.seen: dict[int, psutil.Process] = {}

    def collect(self, pid: int | None) -> None:
        if pid is None:
            return
        try:
            kids = psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return
        for proc in kids:
            self.seen.setdefault(proc.pid, proc)

    def kill_leftovers(self, grace: float = 5.0) -> list[str]:
        """Give them `grace` seconds to exit with the kernel, then kill the rest (psutil checks
        each one's start time, so a reused pid is never hit)."""
        _, alive = psutil.wait_procs(list(self.seen.values()), timeout=grace)
        killed = []
        for proc in alive:
            try:
                killed.append(" ".join(proc.cmdline()[:3])[:120])
                proc.kill()
            except psutil.NoSuchProcess:
                continue
        return killed


def execute(name: str, specs: KernelSpecManager, tag: str = "",
            parameters: dict[str, Any] | None = None) -> tuple[Any, float]:
    """Run the notebook in its own folder, with `parameters` injected as papermill injects them;
    returns the executed notebook and the seconds taken (`tag` names the kept copy:
    `<name>-<tag>.ipynb`)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if parameters:  # read as papermill reads it (every cell given a `tags` list), then injected
        nb = parameterize_notebook(load_notebook_node(str(NOTEBOOKS / name)), parameters)
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)
    tracked = Descendants()
    client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name=KERNEL,
                            resources={"metadata": {"path": str(NOTEBOOKS)}},
                            on_cell_executed=lambda **_: tracked.collect(_kernel_pid(km)))
    started = time.monotonic()
    try:
        client.execute()
    finally:
        elapsed = time.monotonic() - started
        left = tracked.kill_leftovers()
        if left:
            print(f"{name}: killed leftovers {left}")
        if keep := os.environ.get("LAKEINLET_NOTEBOOK_OUTPUT"):  # to look at what ran
            Path(keep).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, Path(keep) / (Path(name).stem + (f"-{tag}" if tag else "") + ".ipynb"))
    return nb, elapsed


def _kernel_pid(km: KernelManager) -> int | None:
    process = getattr(km.provisioner, "process", None)
    return None if process is None else int(process.pid)


def outputs(nb: Any, kind: str = "stream") -> Iterator[dict[str, Any]]:
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out["output_type"] == kind or (kind == "image" and "image/png" in out.get("data", {})):
                yield out


def stdout(nb: Any, name: str = "stdout") -> str:
    return "".join(o["text"] for o in outputs(nb) if o["name"] == name)


def summary(nb: Any) -> dict[str, Any]:
    """The JSON object the last cell prints as its last line."""
    last = nb.cells[-1]
    text = "".join(o.get("text", "") for o in last.get("outputs", []) if o.get("name") == "stdout")
    assert text.strip(), "the last cell printed nothing"
    return dict(json.loads(text.strip().splitlines()[-1]))


def slowest(nb: Any, n: int = 3) -> str:
    """The `n` slowest code cells as `#index seconds`, from nbclient's timing metadata."""
    times = []
    for i, cell in enumerate(nb.cells):
        ex = cell.get("metadata", {}).get("execution", {})
        if "iopub.execute_input" in ex and "shell.execute_reply" in ex:
            start, end = (datetime.fromisoformat(ex[k].replace("Z", "+00:00"))
                          for k in ("iopub.execute_input", "shell.execute_reply"))
            times.append(((end - start).total_seconds(), i))
    return ", ".join(f"#{i} {t:.1f}s" for t, i in sorted(times, reverse=True)[:n])


@pytest.fixture
def run_notebook(kernel_specs: KernelSpecManager, kernel_env: None,
                 capsys: pytest.CaptureFixture[str]) -> Any:
    def run(name: str, tag: str = "", **parameters: Any) -> Any:
        nb, elapsed = execute(name, kernel_specs, tag, parameters)
        with capsys.disabled():
            label = f"{name} ({tag})" if tag else name
            print(f"\n[notebook time] {label}: {elapsed:.1f} s; slowest cells: {slowest(nb)}")
        return nb
    return run


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("target_format", ["delta", "hudi", "iceberg"])
def test_quickstart(run_notebook: Any, monkeypatch: pytest.MonkeyPatch, target_format: str) -> None:
    monkeypatch.setenv("LAKEINLET_TARGET_FORMAT", target_format)  # the kernel inherits it
    nb = run_notebook("01_quickstart.ipynb", target_format)
    got = summary(nb)
    # Rows counted by the format's own reader: a table of another format would not read at all.
    assert got == {"rows_read": 24, "rows": 24, "uploaded": 24, "duplicates": 0, "objects": 6,
                   "format": target_format, "load_batches": 3, "changelog_version": 0,
                   "tables": {"json": 8, "csv": 8, "parquet": 8}}
    text = stdout(nb)
    assert f"target format: {target_format};" in text
    assert "loaded 8 rows in 1 batches" in text  # once per source format: 2 files x 4 rows
    html = "".join(o["data"].get("text/html", "") for o in outputs(nb, "execute_result"))
    assert "filtered" in html and "csv/part-00000.csv" in html  # the ledger table was shown


@pytest.mark.timeout(1200)
def test_changelog_and_lag(run_notebook: Any) -> None:
    nb = run_notebook("02_changelog_and_lag.ipynb")
    got = summary(nb)
    assert (got["rows"], got["uploaded"], got["duplicates"]) == (60, 60, 0)
    assert got["changelog_commits"] == 4
    assert got["load_batches"] == 3  # --max-files 5 over 8 objects, then 5 objects
    assert got["lag_objects"] == 12
    assert got["dlq"] == 1 and "not JSON" in got["dlq_reasons"][0]
    assert got["quarantined"] == ["corrupt"]
    assert got["routes_lag_events"] == {"orders": 2, "returns": 2}  # the returns' changelog commit
    assert got["fresh"] == [3, True]  # the watermark: changelog version 3, the newest event loaded
    assert got["routes_fresh"] == {"orders": True, "returns": False}  # no event reached returns first
    assert len(list(outputs(nb, "image"))) == 3, "expected the three figures"
    text = stdout(nb)
    assert "dlq:   1 visible" in text and re.search(r"dlq_visible +1\b", text)  # any key column width
    assert "lag: 2 versions, 5 events" in text  # status before the last run
    assert "checkpoint: 3 (target version" in text and "lag: 0 versions, 0 events" in text
    assert "changelog version 1)" in text and "version 1); caught up" not in text  # status, behind
    assert "changelog version 3); caught up, nothing pending" in text


@pytest.mark.timeout(1200)
def test_reset_and_backfill(run_notebook: Any) -> None:
    nb = run_notebook("03_reset_and_backfill.ipynb")
    got = summary(nb)
    assert (got["rows"], got["uploaded"], got["duplicates"]) == (55, 55, 0)
    assert got["reset_to"] == 0 and got["reread_events"] == 5 and got["rows_after_reset"] == 40
    assert got["backfilled"] == 3
    text = stdout(nb)
    assert "re-read version 1" in text and "re-read version 2" in text and "dry run: nothing changed" in text
    assert "3 objects," in text and "0 objects, 0 bytes to add" in text
    summaries = [json.loads(line) for line in stdout(nb, "stderr").splitlines()
                 if line.startswith("{") and '"event": "summary"' in line]
    assert [(s["rows"], s["skipped_known"]) for s in summaries] == [(0, 5)]  # the re-run after the reset


# ---- the notebooks pointed at a pipeline the test set up, not at their demo -------------------------

@pytest.fixture(scope="module")
def pipeline(moto_server: MotoServer) -> dict[str, Any]:
    """A small real pipeline on the emulator: 3 polls (changelog versions 0-2) of 4 JSON files x 7
    rows, one loader drain (Spark, in its own process) into a Delta table, then a 5th file polled
    (version 3, pending) and a 6th left on the queue (never polled: a backfill finds it)."""
    stack = provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"))
    aws, lake = AwsSection(endpoint_url=moto_server.endpoint), unique("lake")
    s3 = client("s3", aws)
    s3.create_bucket(Bucket=lake)
    facts = {"changelog": f"s3://{lake}/changelog", "table": f"s3://{lake}/orders",
             "queue": stack.queue_url, "bucket": stack.bucket, "endpoint": moto_server.endpoint}
    polled = ["--queue-url", stack.queue_url, "--changelog", facts["changelog"], "--endpoint-url",
              moto_server.endpoint, "--bucket", stack.bucket, "--until-empty", "--receivers", "1"]
    for start, count in [(0, 2), (2, 1), (3, 1)]:
        upload(s3, stack.bucket, make_files("json", count, rows_per_file=7, prefix="orders/", start=start))
        assert poll(polled) == 0
    loader = [sys.executable, "-m", "lakeinlet.incremental", "run", "--drain", "--changelog",
              facts["changelog"], "--table", facts["table"], "--endpoint-url", moto_server.endpoint,
              "--source-format", "json", "--schema", SCHEMA_DDL, "--prefix", "orders/",
              "--master", "local[2]", "--shuffle-partitions", "2"]
    done = subprocess.run(loader, capture_output=True, text=True, timeout=CELL_TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    upload(s3, stack.bucket, make_files("json", 1, rows_per_file=7, prefix="orders/", start=4))
    assert poll(polled) == 0
    upload(s3, stack.bucket, make_files("json", 1, rows_per_file=7, prefix="orders/", start=5))
    return facts | {"aws": aws}


def _untouched(p: dict[str, Any]) -> tuple[int, int]:
    """The changelog's head and the target's newest version: a notebook that only reads moves neither."""
    from lakeinlet.changelog.reader import DeltaChangelog
    from lakeinlet.observe import frames as observe

    head = DeltaChangelog(p["changelog"], p["aws"]).commits()[-1].version
    return head, int(observe.load_batches_frame(p["table"], p["aws"]).version.max())


@pytest.mark.timeout(1200)
def test_quickstart_on_a_pipeline_given_by_papermill_parameters(run_notebook: Any,
                                                                 pipeline: dict[str, Any]) -> None:
    nb = run_notebook("01_quickstart.ipynb", "pipeline", CHANGELOG=pipeline["changelog"],
                      TABLE=pipeline["table"], QUEUE_URL=pipeline["queue"], ENDPOINT_URL=pipeline["endpoint"])
    # 28 rows of 4 objects in 1 batch, changelog head 3: this pipeline's, where the demo has 24, 6, 3 and 0
    assert summary(nb) == {"rows": 28, "objects": 4, "load_batches": 1, "changelog_version": 3,
                           "tables": {"": 28}}
    text = stdout(nb)
    assert f"pipeline: changelog {pipeline['changelog']}; table={pipeline['table']} (delta)" in text
    assert "target format:" not in text  # the demo's set-up did not run
    html = "".join(o["data"].get("text/html", "") for o in outputs(nb, "execute_result"))
    assert "orders/part-00003.jsonl" in html and "orders/part-00004.jsonl" in html  # ledger; newest events
    assert _untouched(pipeline) == (3, 1)


@pytest.mark.timeout(1200)
def test_changelog_and_lag_on_a_pipeline_given_by_the_jobs_environment(
        run_notebook: Any, pipeline: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, key in [("LAKEINLET__TABLES__CHANGELOG", "changelog"), ("LAKEINLET__TABLES__TABLE", "table"),
                      ("LAKEINLET__QUEUE__QUEUE_URL", "queue"),
                      ("LAKEINLET__AWS__ENDPOINT_URL", "endpoint")]:
        monkeypatch.setenv(name, pipeline[key])  # the kernel inherits them
    got = summary(run_notebook("02_changelog_and_lag.ipynb", "pipeline"))
    assert got == {"changelog_commits": 4, "load_batches": 1, "rows_loaded": 28, "lag_objects": 4,
                   "dlq": 0, "dlq_reasons": [], "quarantined": [], "fresh": [2, True]}
    assert _untouched(pipeline) == (3, 1)


@pytest.mark.timeout(1200)
def test_reset_and_backfill_on_a_pipeline_only_dry_runs_without_apply(
        run_notebook: Any, pipeline: dict[str, Any]) -> None:
    nb = run_notebook("03_reset_and_backfill.ipynb", "pipeline", CHANGELOG=pipeline["changelog"],
                      TABLE=pipeline["table"], ENDPOINT_URL=pipeline["endpoint"],
                      BACKFILL_BUCKET=pipeline["bucket"])
    # by default midway between versions 1 and 2: the reset would re-read versions 2 and 3, one event each
    assert summary(nb) == {"reset_to": 1, "reread_events": 2, "applied": False, "backfilled": 0,
                           "changelog_version": 3}
    text = stdout(nb)
    assert "re-read version 2" in text and "dry run: nothing changed" in text
    assert "dry run only: the reset was not applied" in text
    assert "orders/part-00005.jsonl" in text and "bytes to add (of 6 listed)" in text  # never polled
    assert _untouched(pipeline) == (3, 1)
