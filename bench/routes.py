"""Benchmark: ten routes in one `lakeinlet-load run --drain --routes` process beside ten single-table
`lakeinlet-load run --drain --table … --prefix …` processes over the same objects and the same
changelog, in the same run on one moto server: wall time, peak memory of the process trees (Python
drivers and their JVMs) and changelog reads. Figures and ratios against the ten processes, never
asserted; the issue's goals (at least 3x faster, at most half the memory) are printed beside them."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspark

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from loader_common import bucket, put_many, record  # noqa: E402
from report import Run, add_json_flag  # noqa: E402

from lakeinlet.aws import AwsSection  # noqa: E402
from lakeinlet.changelog.reader import DeltaChangelog  # noqa: E402
from lakeinlet.delta_io import open_table  # noqa: E402
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer  # noqa: E402
from lakeinlet.dev.samples import SCHEMA_DDL, make_files  # noqa: E402
from lakeinlet.storage import delta_uri, storage_options  # noqa: E402

LOAD = Path(sys.executable).parent / "lakeinlet-load"
SAMPLE_S = 0.2
GOAL_SPEED, GOAL_MEMORY = 3.0, 0.5
ROUTES_LINE = re.compile(r"loaded (\d+) rows into (\d+) tables in (\d+) batches; the changelog read "
                         r"(\d+) times \((\d+) versions\)")
SINGLE_LINE = re.compile(r"loaded (\d+) rows in (\d+) batches")


def load_avg() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cpus)"


def _status(pid: str) -> tuple[int, int, str] | None:
    """(ppid, VmRSS KiB, name) of a process from /proc/<pid>/status; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    ppid, rss, name = 0, 0, ""
    for line in text.splitlines():
        if line.startswith("Name:"):
            name = line.split(None, 1)[1] if len(line.split()) > 1 else ""
        elif line.startswith("PPid:"):
            ppid = int(line.split()[1])
        elif line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return ppid, rss, name


class TreeSampler(threading.Thread):
    """Every SAMPLE_S seconds, the sum of VmRSS over every process descended from the roots (the
    loader processes: their Python, spark-submit's JVM and anything they start), from /proc. Keeps
    the peak of the sum and, at that sample, its JVM (`java`) and other parts."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.roots: set[int] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.peak_kib = self.peak_java_kib = self.peak_procs = self.samples = 0
        self.heap_flags: set[str] = set()

    def add(self, pid: int) -> None:
        with self.lock:
            self.roots.add(pid)

    def sample(self) -> None:
        table: dict[int, tuple[int, int, str]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (st := _status(entry)) is not None:
                table[int(entry)] = st
        with self.lock:
            roots = set(self.roots)
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        tree, todo = set(), [r for r in roots if r in table]
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo.extend(children.get(pid, []))
        total = sum(table[p][1] for p in tree)
        java = sum(table[p][1] for p in tree if table[p][2] == "java")
        self.samples += 1
        if total > self.peak_kib:
            self.peak_kib, self.peak_java_kib = total, java
        self.peak_procs = max(self.peak_procs, len(tree))
        for pid in tree:
            if table[pid][2] == "java" and len(self.heap_flags) < 4:
                try:
                    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                self.heap_flags |= {a.decode() for a in args if a.startswith(b"-Xmx")} or {"(no -Xmx)"}

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(SAMPLE_S)

    def stop(self) -> None:
        self.done.set()
        self.join()


@dataclass
class Side:
    name: str
    processes: int
    wall_s: float = 0.0
    peak_mib: float = 0.0
    peak_java_mib: float = 0.0
    changelog_reads: int = 0
    batches: list[int] = field(default_factory=list)
    loaded_rows: int = 0
    table_rows: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    heap: str = ""


def run_side(side: Side, commands: Sequence[list[str]], concurrent: bool, logs: Path,
             env: dict[str, str]) -> list[tuple[str, str]]:
    """Runs the commands (all at once, or one after another) under one sampler; returns each
    one's (stdout, stderr). Wall time: the first start to the last exit."""
    sampler = TreeSampler()
    sampler.start()
    outs: list[tuple[str, str]] = []
    stem = side.name.replace(" ", "-")
    started = time.monotonic()

    def launch(i: int, cmd: list[str]) -> subprocess.Popen[bytes]:
        with (logs / f"{stem}-{i}.out").open("wb") as out, (logs / f"{stem}-{i}.err").open("wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        sampler.add(proc.pid)
        return proc

    try:
        if concurrent:
            procs = [launch(i, c) for i, c in enumerate(commands)]
            codes = [p.wait() for p in procs]
        else:
            codes = [launch(i, c).wait() for i, c in enumerate(commands)]
        side.wall_s = time.monotonic() - started
    finally:
        sampler.stop()
    side.peak_mib, side.peak_java_mib = sampler.peak_kib / 1024, sampler.peak_java_kib / 1024
    side.heap = ", ".join(sorted(sampler.heap_flags))
    for i, code in enumerate(codes):
        out = (logs / f"{stem}-{i}.out").read_text(errors="replace")
        err = (logs / f"{stem}-{i}.err").read_text(errors="replace")
        outs.append((out, err))
        if code != 0:
            side.failed.append(f"process {i} exited {code}")
            print(f"!! {side.name} process {i} exited {code}; the end of its stderr:\n"
                  + "\n".join(err.splitlines()[-15:]), file=sys.stderr)
    return outs


def json_events(stderr: str, event: str) -> list[dict[str, Any]]:
    found = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if obj.get("event") == event:
                found.append(obj)
    return found


def count_rows(aws: AwsSection, uri: str) -> int:
    dt = open_table(delta_uri(uri), storage_options(aws, uri))
    return -1 if dt is None else int(dt.to_pyarrow_dataset().count_rows())


def warm_page_cache(folders: Sequence[Path]) -> None:
    """Reads the jars once so that neither side pays for the first read from disk."""
    for folder in folders:
        for path in folder.rglob("*.jar"):
            with path.open("rb") as f:
                while f.read(1 << 20):
                    pass


def main() -> int:
    """Prints the table (side, processes, wall s, peak RSS MiB, changelog reads, rows) and the
    ratios wall(ten)/wall(routes) and mem(routes)/mem(ten) beside the issue's goals."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6 objects of 200 rows per route")
    ap.add_argument("--routes", type=int, default=10, help="routes / single-table processes (default 10)")
    ap.add_argument("--objects", type=int, default=0, help="objects per route (default 30; --quick 6)")
    ap.add_argument("--rows", type=int, default=0, help="rows per object (default 1000; --quick 200)")
    ap.add_argument("--events-per-commit", type=int, default=20,
                    help="changelog events per commit, routes interleaved, as a poller commits (default 20)")
    ap.add_argument("--sequential", action="store_true",
                    help="also run the single-table processes one after another")
    ap.add_argument("--master", default="local[2]", help="Spark master of every process (default local[2])")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="passed to every process of both sides, e.g. spark.driver.memory=1g")
    ap.add_argument("--route-threads", default="1,2", metavar="N,N",
                    help="run the routes side once per --route-threads value (default 1,2); the first is "
                         "the one the single-table processes are compared with")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    per_route = args.objects or (6 if args.quick else 30)
    rows = args.rows or (200 if args.quick else 1000)
    names = [f"r{i}" for i in range(args.routes)]
    os.environ.update(TEST_CREDENTIALS)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    env = dict(os.environ)
    jars = os.environ.get("LAKEINLET_JARS")
    load_start = os.getloadavg()
    print(f"routes benchmark: {args.routes} routes x {per_route} parquet objects x {rows} rows; "
          f"changelog commits of {args.events_per_commit} events, routes interleaved; "
          f"every process: --master {args.master}, --log-format json"
          + "".join(f", --spark-conf {c}" for c in args.spark_conf)
          + ("" if args.spark_conf else ", Spark's default driver memory"))
    print(f"shared machine (other jobs, e.g. Spark tests, may run beside this one): before: {load_avg()}")
    warm_page_cache([Path(p) for p in (jars,) if p] + [Path(pyspark.__file__).parent / "jars"])

    with MotoServer() as server, tempfile.TemporaryDirectory() as tmp:
        aws = AwsSection(endpoint_url=server.endpoint)
        landing, logbucket = bucket(aws, "land"), bucket(aws, "chg")
        files = {n: make_files("parquet", per_route, rows, prefix=f"{n}/", start=i * per_route)
                 for i, n in enumerate(names)}
        interleaved = [files[n][j] for j in range(per_route) for n in names]
        events = put_many(aws, landing, [(f.key, f.body) for f in interleaved])
        changelog_uri = f"s3a://{logbucket}/changelog"
        changelog = DeltaChangelog(changelog_uri, aws)
        step = args.events_per_commit
        for k in range(0, len(events), step):
            record(changelog, events[k:k + step])
        commits = changelog.head_version() + 1
        want = {n: sum(len(f.rows) for f in fs) for n, fs in files.items()}
        mb = sum(len(f.body) for f in interleaved) / 1e6
        print(f"moto on {server.endpoint}; {len(events)} objects ({mb:.1f} MB, {sum(want.values()):,} rows) "
              f"in {commits} changelog commits at {changelog_uri}, read by both sides (only read: the "
              "routes side's record of unrouted objects goes to its own lake bucket)")

        common = [str(LOAD), "run", "--drain", "--changelog", changelog_uri, "--schema", SCHEMA_DDL,
                  "--endpoint-url", server.endpoint, "--master", args.master, "--log-format", "json",
                  *(["--jars", jars] if jars else []),
                  *(a for c in args.spark_conf for a in ("--spark-conf", c))]
        logs = Path(tmp)
        sides: list[Side] = []

        for threads in [int(t) for t in args.route_threads.split(",")]:
            lake = bucket(aws, "lake-routes")
            toml = logs / f"routes-{threads}.toml"
            toml.write_text("".join(f'[[route]]\nname = "{n}"\ntable = "s3a://{lake}/{n}"\n'
                                    f'prefix = ["{n}/"]\nsource_format = "parquet"\n\n' for n in names))
            a = Side(f"routes, {threads} thread{'s' if threads > 1 else ''}", 1)
            out, err = run_side(a, [[*common, "--routes", str(toml), "--route-threads", str(threads),
                                     "--unrouted-table", f"s3a://{lake}/unrouted"]], True, logs, env)[0]
            if m := ROUTES_LINE.search(out):
                a.loaded_rows, a.changelog_reads, a.batches = int(m[1]), int(m[4]), [int(m[3])]
            summaries = json_events(err, "summary")
            if summaries and summaries[-1].get("changelog_reads") is not None:
                a.changelog_reads = int(summaries[-1]["changelog_reads"])
            a.table_rows = {n: count_rows(aws, f"s3a://{lake}/{n}") for n in names}
            sides.append(a)
        routed = len(sides)

        modes = [True, False] if args.sequential else [True]
        for concurrent in modes:
            lake = bucket(aws, "lake-single")
            how = "concurrent" if concurrent else "sequential"
            b = Side(f"single x{args.routes} {how}", args.routes)
            singles = [[*common, "--table", f"s3a://{lake}/{n}", "--prefix", f"{n}/"] for n in names]
            outs = run_side(b, singles, concurrent, logs, env)
            for out, err in outs:
                m = SINGLE_LINE.search(out)
                batches = int(m[2]) if m else len(json_events(err, "batch"))
                b.batches.append(batches)
                b.loaded_rows += int(m[1]) if m else 0
            b.changelog_reads = sum(b.batches)  # one changelog read per batch in single-table mode
            b.table_rows = {n: count_rows(aws, f"s3a://{lake}/{n}") for n in names}
            sides.append(b)

    load_end = os.getloadavg()
    print(f"\n{'side':<26}{'processes':>10}{'wall s':>9}{'peak RSS MiB':>14}{'of it JVM':>11}"
          f"{'changelog reads':>17}{'batches':>9}{'rows':>10}")
    for s in sides:
        batches_txt = str(s.batches[0]) if len(s.batches) == 1 else f"{sum(s.batches)}"
        print(f"{s.name:<26}{s.processes:>10}{s.wall_s:>9.1f}{s.peak_mib:>14,.0f}{s.peak_java_mib:>11,.0f}"
              f"{s.changelog_reads:>17}{batches_txt:>9}{sum(s.table_rows.values()):>10,}")
    for s in sides[routed:]:
        print(f"  {s.name}: batches per process {s.batches} (each reads the whole changelog: objects "
              "outside its prefix are recorded as filtered)")
    print("  JVM heap flags seen (-Xmx128m: spark-class's short-lived launcher JVM; the other: the "
          "driver's): " + "; ".join(f"{s.name}: {s.heap or '?'}" for s in sides))
    print("  the routes side's batches include its record of unrouted objects (one more run)")
    mismatch = False
    for s in sides:
        bad = {n: (got, want[n]) for n, got in s.table_rows.items() if got != want[n]}
        if bad or s.failed:
            mismatch = True
            print(f"!! MISMATCH on {s.name}: table rows (found, expected) {bad}; failures {s.failed}")
    if not mismatch:
        print(f"  rows: every table of every side holds its {rows * per_route:,} rows "
              f"({sum(want.values()):,} a side), counted with delta-rs")

    a = sides[0]
    ratios = []
    print("\nratios (against the single-table processes of this run):")
    for b in sides[1:routed]:
        print(f"  {b.name} vs {a.name}: wall {a.wall_s / b.wall_s:.2f}x as fast")
        ratios.append({"baseline": a.name, "side": b.name, "speedup": a.wall_s / b.wall_s})
    for b in sides[routed:]:
        speed, memory = b.wall_s / a.wall_s, a.peak_mib / b.peak_mib
        reads = b.changelog_reads / a.changelog_reads if a.changelog_reads else float("nan")
        ratios.append({"baseline": b.name, "speedup": speed, "memory_ratio": memory, "reads_ratio": reads})
        print(f"  vs {b.name}: wall(single)/wall(routes) {speed:.2f}x (goal >= {GOAL_SPEED:g}x); "
              f"mem(routes)/mem(single) {memory:.2f} (goal <= {GOAL_MEMORY:g}); "
              f"changelog reads {b.changelog_reads} vs {a.changelog_reads}")
    print("wall: the first process start to the last exit (JVM start-up included); peak RSS: the "
          f"highest sum of VmRSS over the loader processes and all their descendants, sampled every "
          f"{SAMPLE_S} s from /proc (shared pages are counted once per process); changelog reads: the "
          "routes run's summary, and one per batch for each single-table process")
    print(f"shared machine: after: {load_avg()}")
    routed_sides, single_sides = sides[:routed], sides[routed:]
    report.row(f"{args.routes} tables from one changelog ({args.routes} prefixes × {per_route} Parquet "
               f"objects × {rows} rows, every process `{args.master}`)",
               "one `run --routes` process: " + "; ".join(
                   f"{r.name}: {r.wall_s:.1f} s, {r.peak_mib:,.0f} MiB peak RSS, {r.changelog_reads} "
                   "changelog read(s)" for r in routed_sides),
               f"{args.routes} single-table processes: " + "; ".join(
                   f"{b.name}: {b.wall_s:.1f} s, {b.peak_mib:,.0f} MiB, {b.changelog_reads} changelog reads"
                   for b in single_sides),
               "; ".join(f"vs {r['baseline']}: {r['speedup']:.2f}x as fast, {r['memory_ratio']:.2f} of "
                         "the memory" if "memory_ratio" in r else
                         f"{r['side']} {r['speedup']:.2f}x as fast as {r['baseline']}" for r in ratios),
               ratios=ratios, rows_match=not mismatch)
    if args.json:  # the run's document (bench/report.py) and every figure of every side
        Path(args.json).write_text(json.dumps(report.document() | {
            "routes": args.routes, "objects_per_route": per_route, "rows_per_object": rows,
            "changelog_commits": commits, "master": args.master, "spark_conf": args.spark_conf,
            "load_average_start": load_start, "load_average_end": load_end, "rows_match": not mismatch,
            "sides": [{"side": s.name, "processes": s.processes, "wall_s": s.wall_s,
                       "peak_rss_mib": s.peak_mib, "peak_jvm_rss_mib": s.peak_java_mib,
                       "changelog_reads": s.changelog_reads,
                       "batches": s.batches, "loaded_rows": s.loaded_rows, "table_rows": s.table_rows,
                       "failed": s.failed} for s in sides],
            "ratios": ratios,
            "goals": {"speedup_at_least": GOAL_SPEED, "memory_ratio_at_most": GOAL_MEMORY}},
            indent=2, ensure_ascii=False) + "\n")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
