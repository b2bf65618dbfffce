"""Benchmark: freshness per target format, p50/p95/max seconds from an object's PUT to its rows
being visible to another engine (delta-rs, hudi-rs, pyiceberg), both jobs `--continuous` on moto
and objects arriving at a steady rate. Figures, not a test."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from loader_common import ROOT
from report import Run, add_json_flag

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer, provision
from lakeinlet.dev.samples import make_files

BIN = Path(sys.executable).parent


def jobs(stack: Any, table: str, fmt: str, catalog: str, logs: Path) -> list[subprocess.Popen[bytes]]:
    env = os.environ | {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
                        "LAKEINLET__ICEBERG__ICEBERG_CATALOG_URI": catalog}
    common = ["--changelog", "s3://lake/changelog", "--endpoint-url", stack.endpoint]
    poll = [str(BIN / "lakeinlet-poll"), "--queue-url", stack.queue_url, "--bucket", stack.bucket,
            "--batch-seconds", "2", *common]
    load = [str(BIN / "lakeinlet-load"), "run", "--continuous", "--interval-seconds", "1", "--table", table,
            "--target-format", fmt, "--source-format", "json", "--master", "local[2]", *common]
    return [subprocess.Popen(cmd, env=env, stdout=(logs / f"{name}.log").open("wb"), stderr=subprocess.STDOUT)
            for name, cmd in (("poll", poll), (f"load-{fmt}", load))]


def watch(target: Any, seen: dict[str, float], stop: threading.Event) -> None:
    """Poll the target with the format's non-Spark reader; note each key's first appearance."""
    from lakeinlet.observe.frames import target_rows

    while not stop.wait(0.5):
        try:
            keys = set(target_rows(target.uri, target.aws, target.format, ["_source_key"], **target.options)
                       .column("_source_key").to_pylist())
        except Exception:  # the table may not exist yet
            continue
        now = time.time()
        for k in keys - seen.keys():
            seen[k] = now


class Watched:
    def __init__(self, uri: str, aws: AwsSection, fmt: str, options: dict[str, str]) -> None:
        self.uri, self.aws, self.format, self.options = uri, aws, fmt, options


def run_format(stack: Any, aws: AwsSection, fmt: str, minutes: float, rate: float,
               work: Path) -> tuple[float, list[float]]:
    """(seconds from the jobs' start to the warm-up object's rows, latencies of the others)."""
    table, catalog = f"s3a://lake/{fmt}", f"jdbc:sqlite:{work}/catalog-{fmt}.db"
    procs = jobs(stack, table, fmt, catalog, work)
    s3, stop = client("s3", aws), threading.Event()
    puts: dict[str, float] = {}
    seen: dict[str, float] = {}
    options = {"iceberg_catalog_uri": catalog} if fmt == "iceberg" else {}
    reader = threading.Thread(target=watch, args=(Watched(table, aws, fmt, options), seen, stop), daemon=True)
    reader.start()
    try:
        started, warm = time.time(), make_files("json", 1, 3, prefix=f"{fmt}-warmup/")[0]
        s3.put_object(Bucket=stack.bucket, Key=warm.key, Body=warm.body)
        while warm.key not in seen and time.time() < started + 300:
            time.sleep(0.2)
        startup = seen.get(warm.key, float("inf")) - started
        files = make_files("json", int(minutes * 60 * rate), 3, prefix=f"{fmt}/")
        for f in files:
            s3.put_object(Bucket=stack.bucket, Key=f.key, Body=f.body)
            puts[f.key] = time.time()
            time.sleep(1 / rate)
        deadline = time.time() + 120
        while len(set(puts) & set(seen)) < len(puts) and time.time() < deadline:
            time.sleep(1)
    finally:
        stop.set()
        for p in procs:
            p.terminate()
            p.wait(60)
    lat = [seen[k] - t for k, t in puts.items() if k in seen]
    return startup, lat + [float("inf")] * (len(puts) - len(lat))


def main() -> None:
    """Each job runs as its own process; a reader polls the target and notes when each object's
    rows first show. Steady state: one warm-up object goes first and the timed ones start once its
    rows show (the jobs' start-up, JVM and first commit, is printed on its own). What controls it:
    the poller's --batch-seconds (a batch commits that long after its first event), the loader's
    --interval-seconds (its pause between drains) and the loader's batch time (Spark read + commit)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 minute per format")
    ap.add_argument("--minutes", type=float, default=3.0, help="minutes of arrivals per format")
    ap.add_argument("--rate", type=float, default=1.0, help="objects per second")
    ap.add_argument("--formats", default="delta,hudi,iceberg")
    add_json_flag(ap)
    args = ap.parse_args()
    report = Run("Loader")
    found: dict[str, dict[str, float]] = {}
    minutes = 1.0 if args.quick else args.minutes
    os.environ.update(TEST_CREDENTIALS)
    os.environ.setdefault("LAKEINLET_JARS", str(ROOT / ".jars"))
    print(f"freshness: {args.rate:g} object/s for {minutes:g} min per format; poller --batch-seconds 2, "
          f"loader --interval-seconds 1; moto, local[2]; load average {os.getloadavg()[0]:.1f}")
    print(f"{'format':<8} {'start-up s':>10} {'objects':>8} {'p50 s':>7} {'p95 s':>7} {'max s':>7} "
          f"{'not seen':>9}")
    with MotoServer() as server, tempfile.TemporaryDirectory() as tmp:
        stack = provision(server.endpoint, bucket="landing", queue="events")
        aws = AwsSection(endpoint_url=server.endpoint)
        client("s3", aws).create_bucket(Bucket="lake")
        for fmt in args.formats.split(","):
            startup, lat = run_format(stack, aws, fmt, minutes, args.rate, Path(tmp))
            done = sorted(x for x in lat if x != float("inf"))
            p95 = done[int(0.95 * (len(done) - 1))] if done else float("nan")
            print(f"{fmt:<8} {startup:>10.1f} {len(lat):>8} {statistics.median(done):>7.1f} "
                  f"{p95:>7.1f} {max(done):>7.1f} {len(lat) - len(done):>9}")
            found[fmt] = {"startup_s": startup, "p50_s": statistics.median(done), "p95_s": p95,
                          "max_s": max(done), "objects": len(lat), "not_seen": len(lat) - len(done)}
    seen = ", ".join(f"{f.title()} {v['p50_s']:.1f}/{v['p95_s']:.1f}/{v['max_s']:.1f} s"
                     for f, v in found.items())
    startups = ", ".join(f"{f.title()} {v['startup_s']:.0f} s" for f, v in found.items())
    report.row(f"freshness, {args.rate:g} object/s, both jobs `--continuous`",
               f"PUT → rows visible to another engine, p50/p95/max: {seen}",
               f"start-up (jobs started → first rows visible): {startups}", "", **found)
    report.write(args.json)


if __name__ == "__main__":
    main()
