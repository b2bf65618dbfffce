"""Benchmark: the loader under spark-submit on a standalone cluster on 127.0.0.1, one one-core executor
against two on the same objects (alternating pairs), with each phase of the batch timed apart."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pyspark
from loader_common import ROOT, bucket, put_many, record
from report import Run as Report
from report import add_json_flag

from lakeinlet import jars
from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.targets import formats_on_line
from tests.catalogs import RestCatalogServer
from tests.cluster.conftest import IVY_SETTINGS, Submitter, ivy_dir
from tests.cluster.flow import parse
from tests.cluster.standalone import StandaloneCluster, _kill_group

PHASES = ("plan", "read", "commit", "ledger")
"""The batch's phases as the loader times them (`batch` log line); `ledger` is the rest of its
total: the ledger append (and quarantine commit) after the target's commit."""
SIZES = (1, 2)
WARM_FILES = 4
"""Objects of each load's warm-up batch (the session starts, the executors register, the table is
created), so the measured batch appends with warm JVMs, as a long-running loader's would."""


@dataclass
class Run:
    """One spark-submit of the loader and its timed batch: the phases, and what Spark ran in them."""

    workers: int
    cold_s: float
    """spark-submit start to the end of the warm-up batch: JVMs, --packages, session, executors."""
    batch: dict[str, float]
    jobs: dict[str, float]
    """Seconds of each phase during which at least one Spark job ran (work that can split)."""
    executors: int
    """Executors that ran tasks of the timed batch."""
    tasks: int
    task_run_s: float
    task_cpu_s: float
    busy_cores: float
    moto_cpu_s: float

    @property
    def total(self) -> float:
        return self.batch["total"]

    @property
    def job_s(self) -> float:
        return sum(self.jobs.values())


@dataclass
class Lake:
    """The landing objects; each load gets a fresh lake bucket (changelog, table, ledger)."""

    aws: AwsSection
    warm: list[Any]
    events: list[Any]
    rows: int
    rest_uri: str = ""

    def fresh(self) -> str:
        """A lake bucket whose changelog names the warm-up objects only."""
        lake = bucket(self.aws, "lake")
        record(DeltaChangelog(f"s3://{lake}/changelog", self.aws), self.warm)
        return lake

    def add(self, lake: str) -> None:
        """The measured objects, as one more changelog version."""
        record(DeltaChangelog(f"s3://{lake}/changelog", self.aws), self.events)

    def drop(self, lake: str) -> None:
        """Empty a lake bucket once its load is checked (moto keeps every object in memory)."""
        s3 = client("s3", self.aws)
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=lake):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            for i in range(0, len(keys), 1000):
                s3.delete_objects(Bucket=lake, Delete={"Objects": keys[i:i + 1000]})


def load_command(fmt: str, workers: int, lake: str, events_dir: Path, file_mb: int, rest_uri: str) -> str:
    """The cluster tier's load (spark-submit, --packages from the Ivy cache) on Parquet, capped at
    `workers` one-core executors, running continuously. The session waits for every executor to
    register, so a two-executor load never starts on the one that came first."""
    groups = "--only s3a" + ("" if fmt == "delta" else f" --only {fmt}")
    iceberg = (f" --iceberg-catalog rest --iceberg-catalog-uri {shlex.quote(rest_uri)}"
               if fmt == "iceberg" else "")
    return (
        f'spark-submit --master "$MASTER" --deploy-mode client $(lakeinlet jars --packages {groups}) '
        '--conf spark.pyspark.driver.python="$VENV/bin/python" '
        '--conf spark.pyspark.python="$VENV/bin/python" '
        f"--conf spark.executor.cores=1 --conf spark.cores.max={workers} "
        "--conf spark.scheduler.minRegisteredResourcesRatio=1.0 "
        "--conf spark.scheduler.maxRegisteredResourcesWaitingTime=120s "
        f"--conf spark.eventLog.enabled=true --conf spark.eventLog.dir=file://{events_dir} "
        "--conf spark.eventLog.compress=false "
        f"{ROOT / 'incremental' / '__main__.py'} run --continuous --interval-seconds 1 "
        f"--source-format parquet --schema {shlex.quote(SCHEMA_DDL)} --target-format {fmt} "
        f"{f'--target-file-mb {file_mb} ' if file_mb else ''}--log-format json "
        f"--changelog s3://{lake}/changelog --table s3://{lake}/orders{iceberg}")


def cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of every core since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def process_cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")


def batch_lines(log: Path) -> list[dict[str, Any]]:
    """The loader's `batch` events so far (JSON log lines)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return [json.loads(line) for line in text.splitlines()
            if line.startswith("{") and '"event": "batch"' in line]


def wait_batches(proc: subprocess.Popen[bytes], log: Path, count: int, timeout: float
                 ) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(found := batch_lines(log)) >= count:
            return found
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    raise RuntimeError(f"the load did not log batch {count} (exit {proc.poll()}):\n{tail}")


def stop_loader(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the loader's Python driver (it stops between batches, stops its session and exits,
    and spark-submit with it); the whole process group only if it does not."""
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
            ours = os.getpgid(int(entry.name)) == proc.pid if argv else False
        except (OSError, ValueError):
            continue
        if ours and b"python" in argv[0] and any(a.endswith(b"__main__.py") for a in argv):
            os.kill(int(entry.name), signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(120)
    if proc.poll() is None:
        _kill_group(proc.pid)
        proc.wait(30)


def union_s(spans: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Seconds of [lo, hi] covered by at least one of `spans`."""
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in spans if b > lo and a < hi)
    covered, end = 0.0, lo
    for a, b in clipped:
        if b > end:
            covered += b - max(a, end)
            end = b
    return covered


def read_events(events_dir: Path) -> list[dict[str, Any]]:
    logs = [p for p in events_dir.iterdir() if p.is_file()]
    if len(logs) != 1:
        raise RuntimeError(f"expected one Spark event log in {events_dir}, found {[p.name for p in logs]}")
    return [json.loads(line) for line in logs[0].read_text().splitlines() if line.strip()]


def job_figures(events: list[dict[str, Any]], windows: dict[str, tuple[float, float]]
                ) -> tuple[dict[str, float], int, int, float, float]:
    """Per phase window, seconds with a Spark job running; and the executors that ran tasks in
    the windows, their tasks, and the tasks' run and CPU seconds."""
    lo, hi = min(w[0] for w in windows.values()), max(w[1] for w in windows.values())
    starts, spans = {}, []
    executors, tasks, run_ms, cpu_ns = set(), 0, 0, 0
    for e in events:
        kind = e.get("Event")
        if kind == "SparkListenerJobStart":
            starts[e["Job ID"]] = e["Submission Time"] / 1000
        elif kind == "SparkListenerJobEnd" and e["Job ID"] in starts:
            spans.append((starts[e["Job ID"]], e["Completion Time"] / 1000))
        elif kind == "SparkListenerTaskEnd" and lo <= e["Task Info"]["Launch Time"] / 1000 <= hi:
            executors.add(e["Task Info"]["Executor ID"])
            tasks += 1
            metrics = e.get("Task Metrics") or {}
            run_ms += metrics.get("Executor Run Time", 0)
            cpu_ns += metrics.get("Executor CPU Time", 0)
    jobs = {phase: union_s(spans, a, b) for phase, (a, b) in windows.items()}
    return jobs, len(executors), tasks, run_ms / 1000, cpu_ns / 1e9


def load_once(submitter: Submitter, lakes: Lake, fmt: str, workers: int, files: int, file_mb: int,
              scratch: Path, moto_pid: int | None, measure: bool = True) -> Run | float:
    """One spark-submit: a warm-up batch of a few objects (session, executors, table), then the
    measured objects added to the changelog and loaded as one batch by the same warm driver.
    Without `measure`, only the warm-up batch: returns its cold start."""
    lake = lakes.fresh()
    events_dir = Path(tempfile.mkdtemp(prefix=f"events-{workers}w-", dir=scratch))
    log = events_dir.parent / f"{events_dir.name}.log"
    script = submitter.flow.script(load_command(fmt, workers, lake, events_dir, file_mb, lakes.rest_uri))
    t0 = time.time()
    proc = submitter.start(script, log, {})
    try:
        warm = wait_batches(proc, log, 1, 600)[0]
        cold_s = datetime.fromisoformat(warm["time"]).timestamp() - t0
        if not measure:
            return cold_s
        busy0, moto0 = cpu_ticks(), process_cpu_s(moto_pid)
        lakes.add(lake)
        line = wait_batches(proc, log, 2, 600)[1]
        busy1, moto1 = cpu_ticks(), process_cpu_s(moto_pid)
    finally:
        stop_loader(proc)
    if line["files"] != files or line["rows"] != files * lakes.rows:
        raise RuntimeError(f"the batch wrote {line['rows']} rows of {line['files']} objects, expected "
                           f"{files * lakes.rows} of {files}")
    batch = {k[:-2]: float(v) for k, v in line.items() if k.endswith("_s")}
    batch["ledger"] = batch["total"] - sum(batch[p] for p in PHASES[:3])
    edge, windows = datetime.fromisoformat(line["time"]).timestamp() - batch["total"], {}
    for phase in PHASES:
        windows[phase] = (edge, edge + batch[phase])
        edge += batch[phase]
    jobs, executors, tasks, run_s, cpu_s = job_figures(read_events(events_dir), windows)
    lakes.drop(lake)
    ncpu = os.cpu_count() or 1
    return Run(workers, cold_s, batch, jobs, executors, tasks, run_s, cpu_s,
               ncpu * (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1), moto1 - moto0)


def show(run: Run, files: int) -> None:
    phases = " ".join(f"{p} {run.batch[p]:.2f} ({run.jobs[p]:.2f})" for p in PHASES)
    print(f"  {run.workers}w: batch {run.total:5.2f} s ({files / run.total:5.1f} obj/s): {phases}; "
          f"executors {run.executors}, tasks {run.tasks} (run {run.task_run_s:.1f} s, cpu "
          f"{run.task_cpu_s:.1f} s); machine busy {run.busy_cores:.2f} cores, moto cpu "
          f"{run.moto_cpu_s:.1f} s; "
          f"cold start {run.cold_s:.1f} s", flush=True)


def med(runs: list[Run], pick: Any) -> float:
    return statistics.median(pick(r) for r in runs)


def summary(fmt: str, runs: dict[int, list[Run]], files: int, mb: float, report: Report) -> None:
    """Medians per executor count, the 2w/1w ratio, and what does not split."""
    one, two = runs[1], runs[2]
    print(f"\n{fmt}: medians of {len(one)} pairs (phase: loader's time; jobs: seconds of it with a "
          "Spark job running; driver-only: the batch's seconds with none)")
    print(f"{'executors':>9} {'used':>5} {'obj/s':>7} {'batch s':>8} "
          + " ".join(f"{p + ' s':>9}" for p in PHASES)
          + f" {'jobs s':>7} {'driver-only s':>14} {'cold start s':>13}")
    for n in SIZES:
        rs = runs[n]
        print(f"{n:>9} {','.join(str(u) for u in sorted({r.executors for r in rs})):>5} "
              f"{files / med(rs, lambda r: r.total):>7.1f} {med(rs, lambda r: r.total):>8.2f} "
              + " ".join(f"{med(rs, lambda r, p=p: r.batch[p]):>9.2f}" for p in PHASES)
              + f" {med(rs, lambda r: r.job_s):>7.2f} {med(rs, lambda r: r.total - r.job_s):>14.2f} "
              f"{med(rs, lambda r: r.cold_s):>13.1f}")
    pairs = [a.total / b.total for a, b in zip(one, two, strict=True)]
    t1, t2 = med(one, lambda r: r.total), med(two, lambda r: r.total)
    print(f"ratio 2w/1w (objects/s): {t1 / t2:.2f}x (pairs {', '.join(f'{p:.2f}x' for p in pairs)}); "
          f"Spark job time {med(one, lambda r: r.job_s) / med(two, lambda r: r.job_s):.2f}x")
    jobs1 = med(one, lambda r: r.job_s)
    print(f"  with the 1-executor batch's Spark job time halved and nothing else changed: "
          f"{t1 / (t1 - jobs1 / 2):.2f}x (its {t1 - jobs1:.2f} s with no Spark job running do not split: "
          "changelog read and ledger lookups, HEADs, query planning in the driver, the target's "
          "commit, the ledger append)")
    for n in SIZES:
        rs = runs[n]
        run_s, cpu_s = med(rs, lambda r: r.task_run_s), med(rs, lambda r: r.task_cpu_s)
        print(f"  {n} executor(s): tasks ran {run_s:.1f} s, {cpu_s:.1f} s of it on a CPU; machine busy "
              f"{med(rs, lambda r: r.busy_cores):.2f} of {os.cpu_count()} cores during the batch; moto "
              f"{med(rs, lambda r: r.moto_cpu_s):.1f} CPU s")

    def side(rs: list[Run]) -> str:
        total, jobs = med(rs, lambda r: r.total), med(rs, lambda r: r.job_s)
        return (f"{files / total:.1f} objects/s, batch {total:.2f} s (Spark jobs {jobs:.2f} s, driver alone "
                f"{total - jobs:.2f} s)")
    report.row(f"the loader on a standalone cluster, one one-core executor against two ({files} narrow "
               f"objects, {mb:.1f} MB, one batch into {fmt} after a warm-up batch; "
               f"medians of {len(one)} pairs)",
               f"2 executors: {side(two)}", f"1 executor: {side(one)}",
               f"{t1 / t2:.2f}x (pairs {', '.join(f'{p:.2f}x' for p in pairs)})",
               one_executor=[r.batch for r in one], two_executors=[r.batch for r in two])


def parse_args() -> argparse.Namespace:
    line, on_line = jars.installed_line(), formats_on_line()
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer, smaller objects and fewer pairs")
    ap.add_argument("--files", type=int, default=0, help="objects (default 300, --quick 40)")
    ap.add_argument("--rows", type=int, default=0, help="rows per object (default 20000)")
    ap.add_argument("--pairs", type=int, default=0, help="timed 1w/2w pairs (default 3, --quick 2)")
    ap.add_argument("--formats", default="delta",
                    help=f"comma-separated target formats (on Spark {line}: {', '.join(on_line)})")
    ap.add_argument("--target-file-mb", type=int, default=0,
                    help="the loader's --target-file-mb (default: the loader's own; a batch of 32 MiB "
                         "or more is written by up to a task per executor core either way)")
    add_json_flag(ap)
    args = ap.parse_args()
    args.files = args.files or (40 if args.quick else 300)
    args.rows = args.rows or 20000
    args.pairs = args.pairs or (2 if args.quick else 3)
    args.formats = args.formats.split(",")
    for fmt in args.formats:
        if fmt not in on_line:
            ap.error(f"--formats: {fmt!r} is not available on Spark {line}")
    return args


def main() -> None:
    """One cluster of two one-core workers: a 1-worker load is capped at one core (spark.cores.max)
    so it runs one executor on one worker, the same daemons idle beside it either way. Each load
    is a fresh spark-submit into a fresh lake bucket from the same landing objects, running
    continuously: a warm-up batch, then the measured objects in one batch appended to the table.
    An untimed load per executor count, then 1w, 2w, 1w, 2w…"""
    args = parse_args()
    report = Report("Loader")
    os.environ.update(TEST_CREDENTIALS)  # this process's uploads and changelog commits to moto
    samples = make_files("parquet", args.files, args.rows)
    warm = make_files("parquet", WARM_FILES, args.rows, prefix="warm/")
    mb = sum(len(f.body) for f in samples) / 1e6
    load_start = Path("/proc/loadavg").read_text().split()[:3]
    print(f"Spark {pyspark.__version__}; {args.files} parquet objects, {args.rows} rows each, {mb:.1f} MB; "
          f"moto over s3a; standalone cluster on 127.0.0.1 (2 workers of 1 core), {os.cpu_count()} cores "
          f"shared with the driver, moto and the daemons; "
          f"--target-file-mb {args.target_file_mb or 'default'}; "
          f"{args.pairs} pairs; load average at start {' '.join(load_start)}")
    print("per load: the measured batch's phases in s, with (seconds a Spark job ran) beside each; the "
          "rest of a phase is the driver alone", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="lakeinlet-cluster-scale-"))
    conf_dir = scratch / "spark-conf"
    conf_dir.mkdir()
    (conf_dir / "ivysettings.xml").write_text(IVY_SETTINGS)
    (conf_dir / "spark-defaults.conf").write_text(
        f"spark.jars.ivy {ivy_dir()}\nspark.jars.ivySettings {conf_dir / 'ivysettings.xml'}\n")
    (scratch / "submit").mkdir()
    cluster = StandaloneCluster(scratch / "cluster", workers=2, cores=1)
    rest: RestCatalogServer | None = None
    try:
        with MotoServer() as moto:
            aws = AwsSection(endpoint_url=moto.endpoint)
            landing = bucket(aws, "land")
            lakes = Lake(aws, put_many(aws, landing, [(f.key, f.body) for f in warm]),
                         put_many(aws, landing, [(f.key, f.body) for f in samples]), args.rows)
            del samples, warm  # their rows as Python objects: memory the loads' JVMs need more
            if "iceberg" in args.formats:
                jar_dir = Path(os.environ.get("LAKEINLET_JARS") or jars.default_dir())
                rest = RestCatalogServer(scratch / "rest-catalog", moto.endpoint, jar_dir).start()
                lakes.rest_uri = rest.endpoint
            t0 = time.monotonic()
            cluster.start()
            print(f"cluster started in {time.monotonic() - t0:.1f} s at {cluster.url}", flush=True)
            submitter = Submitter(parse(), ROOT / ".venv", cluster, moto.endpoint, scratch / "submit",
                                  conf_dir)
            for fmt in args.formats:
                print(f"\n{fmt}:")
                for n in SIZES:
                    cold = load_once(submitter, lakes, fmt, n, args.files, args.target_file_mb, scratch,
                                     moto.pid, measure=False)
                    print(f"  {n}w warm-up load (its warm-up batch only), not counted: cold start "
                          f"{cold:.1f} s", flush=True)
                runs: dict[int, list[Run]] = {n: [] for n in SIZES}
                for _ in range(args.pairs):
                    for n in SIZES:
                        run = load_once(submitter, lakes, fmt, n, args.files, args.target_file_mb, scratch,
                                        moto.pid)
                        assert isinstance(run, Run)
                        runs[n].append(run)
                        show(run, args.files)
                summary(fmt, runs, args.files, mb, report)
    finally:
        if rest is not None:
            rest.stop()
        cluster.stop()
        left = cluster.executors()
        for jar in cluster.root.rglob("*.jar"):  # each executor's copy of the --packages jars
            jar.unlink()
        print(f"\nload average at end {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; "
              f"executors left running: {len(left)}; logs and event logs in {scratch}")
    report.write(args.json)


if __name__ == "__main__":
    main()
