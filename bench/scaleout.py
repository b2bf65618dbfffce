"""Benchmark: the event source scaled out on LocalStack (a real SQS implementation): N events drained
by 1, 2 and 4 `lakeinlet-poll --until-empty` processes on one queue and one changelog, beside the
bare Receive(10)+DeleteMessageBatch loop (one thread) in the same run. Figures, never asserted."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from _localstack import LocalStack, venv_or_skip  # noqa: E402
from _source_common import WORK, bodies, load  # noqa: E402
from poller import bare_loop, send_all  # noqa: E402

from lakeinlet.aws import AwsSection, client  # noqa: E402
from lakeinlet.changelog.reader import DeltaChangelog  # noqa: E402
from lakeinlet.dev.emulator import TEST_CREDENTIALS, free_port  # noqa: E402

POLL = Path(sys.executable).parent / "lakeinlet-poll"


def new_queue(endpoint: str) -> str:
    sqs = client("sqs", AwsSection(endpoint_url=endpoint))
    return str(sqs.create_queue(QueueName=f"scale-{time.time_ns()}",
                                Attributes={"VisibilityTimeout": "300"})["QueueUrl"])


def drain(endpoint: str, url: str, changelog: str, processes: int,
          logs: Path) -> tuple[float, list[float], int]:
    """Start `processes` pollers at once; wait for each (os.wait4: its own peak RSS).
    Returns (seconds from the start to the last exit, peak RSS MB per process, changelog
    versions the pollers found taken by another poller: `commit_conflicts` of their summaries)."""
    cmd = [str(POLL), "--queue-url", url, "--changelog", changelog, "--endpoint-url", endpoint,
           "--until-empty", "--batch-size", "1000", "--receivers", "4", "--wait-seconds", "20",
           "--drain-wait-seconds", "2"]
    started = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=(logs / f"poll-{processes}-{i}.log").open("wb"),
                              stderr=subprocess.STDOUT) for i in range(processes)]
    rss, last = [], started
    for p in procs:
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        last = max(last, time.monotonic())
        rss.append(usage.ru_maxrss / 1024)
        if p.returncode != 0:
            print(f"  poller exited {p.returncode}; see {logs}/poll-{processes}-*.log")
    conflicts = sum(int(m) for i in range(processes) for m in re.findall(
        r"commit_conflicts=(\d+)", (logs / f"poll-{processes}-{i}.log").read_text(errors="replace")))
    return last - started, rss, conflicts


def server_share(cpu: float, seconds: float, events: int) -> str:
    """LocalStack's CPU seconds per 1,000 events and its share of one core, as a column."""
    return f"{cpu / events * 1000:.2f}s {cpu / seconds:>4.0%}"


def main() -> int:
    """Prints events/s, the ratio to the bare loop, changelog commits, rows and duplicates (the same
    event id twice: redeliveries), events missing from the changelog and each process's peak RSS.
    LocalStack runs from its own virtualenv (Python 3.13+, see bench/_localstack.py) on 127.0.0.1;
    it shares the machine's cores with the pollers, which the figures include."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="20,000 events")
    ap.add_argument("--events", type=int, default=250_000, help="events per run (default 250,000)")
    ap.add_argument("--processes", default="1,2,4", help="poller process counts (default 1,2,4)")
    args = ap.parse_args()
    n = 20_000 if args.quick else args.events
    counts = [int(c) for c in args.processes.split(",")]
    os.environ.update({k: os.environ.get(k, v) for k, v in TEST_CREDENTIALS.items()})
    os.environ.pop("AWS_ENDPOINT_URL", None)
    python = venv_or_skip(WORK, "scale-out figures")
    if python is None:
        return 0
    print(f"scale-out: {n:,} events a run, pollers {counts}, batch 1000, 4 receivers each; {load()}")
    with LocalStack(python, free_port(), WORK / "localstack.log") as stack, \
            tempfile.TemporaryDirectory() as tmp:
        ep = stack.endpoint
        warm = new_queue(ep)
        send_all(ep, warm, bodies(2000, start=50_000_000))
        bare_loop(ep, warm, wait=1)
        url = new_queue(ep)
        sent = send_all(ep, url, bodies(n))
        cpu = stack.cpu_seconds()
        got, to_ack, _ = bare_loop(ep, url, wait=1)
        bare_rate, server = got / to_ack, server_share(stack.cpu_seconds() - cpu, to_ack, got)
        print(f"LocalStack on {ep}; sent {n:,} in {sent:.1f} s")
        print(f"{'loop':<30}{'events':>9}{'seconds':>9}{'events/s':>10}{'vs bare':>9}{'server':>15}"
              f"{'commits':>9}{'conflicts':>10}{'rows':>9}{'dup ids':>9}{'missing':>9}"
              "  peak RSS MB per process")
        print(f"{'bare Receive+DeleteBatch':<30}{got:>9,}{to_ack:>9.1f}{bare_rate:>10,.0f}{1:>9.2f}"
              f"{server:>15}")
        for procs in counts:
            url, changelog = new_queue(ep), f"{tmp}/changelog-{procs}"
            send_all(ep, url, bodies(n, start=procs * 10_000_000))
            cpu = stack.cpu_seconds()
            secs, rss, conflicts = drain(ep, url, changelog, procs, Path(tmp))
            server = server_share(stack.cpu_seconds() - cpu, secs, n)
            table = pa.table(DeltaChangelog(changelog).read_versions(-1))
            ids = table.column("event_id").to_pylist()
            commits = DeltaChangelog(changelog).head_version() + 1
            rate = len(set(ids)) / secs
            print(f"{f'lakeinlet-poll x{procs}':<30}{len(set(ids)):>9,}{secs:>9.1f}{rate:>10,.0f}"
                  f"{rate / bare_rate:>9.2f}{server:>15}{commits:>9,}{conflicts:>10,}{len(ids):>9,}"
                  f"{len(ids) - len(set(ids)):>9,}"
                  f"{n - len(set(ids)):>9,}  {', '.join(f'{r:.0f}' for r in rss)}")
    print("server: LocalStack's CPU seconds per 1,000 events and its share of one core over the "
          "loop's seconds (near 100%: the server, not the client, sets the rate); conflicts: "
          "changelog versions a poller found taken by another and retried at the next")
    print("seconds: pollers from process start (imports included) to the last exit (--until-empty with "
          "--drain-wait-seconds 2); bare loop to its last delete. 'dup ids': rows whose event id is "
          "already in the changelog (redeliveries); 'missing': events sent but not in the changelog")
    print(load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
