"""Benchmark: one `lakeinlet-poll` process against the bare Receive(10)+DeleteMessageBatch loop with
0, 15 and 40 ms added to each SQS call (fault proxy), on LocalStack and ElasticMQ (`--mode latency`);
and 1, 2, 4 processes on one queue (`--mode processes`). Figures, never asserted."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from _elasticmq import ElasticMQ  # noqa: E402
from _localstack import LocalStack, venv_or_skip  # noqa: E402
from _source_common import WORK, bodies, cpu_seconds, load  # noqa: E402
from poller import bare_loop, send_all  # noqa: E402
from report import Run, add_json_flag  # noqa: E402

from chaos import FaultPlan, FaultProxy  # noqa: E402
from lakeinlet.aws import AwsSection, client  # noqa: E402
from lakeinlet.changelog.reader import DeltaChangelog  # noqa: E402
from lakeinlet.dev.emulator import TEST_CREDENTIALS, free_port  # noqa: E402

POLL = Path(sys.executable).parent / "lakeinlet-poll"
T = TypeVar("T")


def new_queue(endpoint: str) -> str:
    sqs = client("sqs", AwsSection(endpoint_url=endpoint))
    return str(sqs.create_queue(QueueName=f"scale-{time.time_ns()}",
                                Attributes={"VisibilityTimeout": "300"})["QueueUrl"])


def drain(endpoint: str, url: str, changelog: str, processes: int, logs: Path,
          extra: tuple[str, ...] = ("--receivers", "4", "--max-receivers", "4",
                                    "--drain-wait-seconds", "2"),
          ) -> tuple[float, list[float], int]:
    """Start `processes` pollers at once; wait for each (os.wait4: its own peak RSS).
    Returns (seconds from the start to the last exit, peak RSS MB per process, changelog
    versions the pollers found taken by another poller: `commit_conflicts` of their summaries)."""
    cmd = [str(POLL), "--queue-url", url, "--changelog", changelog, "--endpoint-url", endpoint,
           "--any-bucket", "--until-empty", "--batch-size", "1000", "--wait-seconds", "20", *extra]
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


def bench_processes(python: Path, n: int, counts: list[int], run: Run) -> None:
    """Events/s, the ratio to the bare loop, changelog commits, rows and duplicates (the same
    event id twice: redeliveries), events missing from the changelog and each process's peak RSS,
    for 1, 2, 4... `lakeinlet-poll` processes on one queue and one changelog (no proxy)."""
    print(f"\n== scale-out: {n:,} events a run, pollers {counts}, batch 1000, 4 receivers each; "
          f"{load()} ==")
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
        rates: dict[int, tuple[float, int, int]] = {}
        for procs in counts:
            url, changelog = new_queue(ep), f"{tmp}/changelog-{procs}"
            send_all(ep, url, bodies(n, start=procs * 10_000_000))
            cpu = stack.cpu_seconds()
            secs, rss, conflicts = drain(ep, url, changelog, procs, Path(tmp))
            server = server_share(stack.cpu_seconds() - cpu, secs, n)
            rows, unique, commits = changelog_counts(changelog)
            rate = unique / secs
            rates[procs] = (rate, rows - unique, n - unique)
            print(f"{f'lakeinlet-poll x{procs}':<30}{unique:>9,}{secs:>9.1f}{rate:>10,.0f}"
                  f"{rate / bare_rate:>9.2f}{server:>15}{commits:>9,}{conflicts:>10,}{rows:>9,}"
                  f"{rows - unique:>9,}{n - unique:>9,}  {', '.join(f'{r:.0f}' for r in rss)}")
    counted = " / ".join(str(p) for p in rates)
    run.row(f"scale-out on LocalStack, no added latency ({n:,} events a run)",
            f"{counted} poller processes on one queue and one changelog: "
            + " / ".join(f"{r:,.0f}" for r, _, _ in rates.values()) + " events/s (process start included), "
            f"{sum(d for _, d, _ in rates.values())} duplicate ids, "
            f"{sum(m for _, _, m in rates.values())} missing",
            f"the bare Receive(10)+DeleteMessageBatch loop, one thread: {bare_rate:,.0f} events/s",
            " / ".join(f"{r / bare_rate:.2f}x" for r, _, _ in rates.values()),
            bare_events_per_s=bare_rate, pollers={p: r for p, (r, _, _) in rates.items()})
    print("server: LocalStack's CPU seconds per 1,000 events and its share of one core over the "
          "loop's seconds (near 100%: the server, not the client, sets the rate); conflicts: "
          "changelog versions a poller found taken by another and retried at the next")
    print("seconds: pollers from process start (imports included) to the last exit (--until-empty with "
          "--drain-wait-seconds 2); bare loop to its last delete. 'dup ids': rows whose event id is "
          "already in the changelog (redeliveries); 'missing': events sent but not in the changelog")


def changelog_counts(changelog: str) -> tuple[int, int, int]:
    """(rows, distinct event ids, commits) of a changelog."""
    ids = pa.table(DeltaChangelog(changelog).read_versions(-1)).column("event_id").to_pylist()
    return len(ids), len(set(ids)), DeltaChangelog(changelog).head_version() + 1


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system, waited-for children included) of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@dataclass
class Window:
    """One loop as the proxy saw it, from its first ReceiveMessage's arrival to its last
    DeleteMessageBatch's answer: seconds, SQS calls, mean and most calls in flight at once; and
    the CPU seconds the server, the proxy and the client (this process and the pollers it
    waited for, start-up included) used over the whole run."""

    seconds: float
    calls: int
    mean_in_flight: float
    max_in_flight: int
    cpu: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @classmethod
    def of(cls, stats: dict[str, Any]) -> Window:
        first, last = stats["spans"]["ReceiveMessage"], stats["spans"]["DeleteMessageBatch"]
        seconds = last["last"] - first["first"]
        calls = sum(stats["requests"].get(op, 0) for op in (
            "ReceiveMessage", "DeleteMessageBatch", "ChangeMessageVisibilityBatch"))
        return cls(seconds, calls, (last["last_area"] - first["first_area"]) / seconds,
                   stats["in_flight_max"])


def client_cpu() -> float:
    return cpu_seconds() + cpu_seconds(children=True)


def measured(proxy: FaultProxy, server_cpu: Callable[[], float],
             run: Callable[[], T]) -> tuple[Window, T]:
    """Run one loop through `proxy` with fresh counters: its window (with the CPU used
    meanwhile) and what `run` returned."""
    proxy.set_plan(FaultPlan(), seed=0)  # restarts the counters, the in-flight ones too
    assert proxy.pid is not None
    pid = proxy.pid
    before = (server_cpu(), proc_cpu(pid), client_cpu())
    out = run()
    window = Window.of(proxy.stats())
    window.cpu = (server_cpu() - before[0], proc_cpu(pid) - before[1], client_cpu() - before[2])
    return window, out


@contextmanager
def sqs_server(name: str, python: Path | None) -> Iterator[tuple[str, Callable[[], float]]]:
    """(endpoint, CPU seconds so far) of a fresh LocalStack or ElasticMQ on 127.0.0.1."""
    if name == "localstack":
        assert python is not None
        with LocalStack(python, free_port(), WORK / "localstack.log") as stack:
            yield stack.endpoint, stack.cpu_seconds
    else:
        with ElasticMQ(free_port(), WORK / "elasticmq.log") as mq:
            yield mq.endpoint, mq.cpu_seconds


LATENCY_HEADER = (f"{'server':<11}{'delay':>6}  {'loop':<16}{'receivers':>10}{'events':>9}{'seconds':>8}"
                  f"{'events/s':>9}{'calls/s':>8}{'in flight':>11}{'vs bare':>8}"
                  f"{'CPU s/1k: server proxy client':>31}{'cores':>6}{'commits':>8}{'dup':>5}{'missing':>8}")


def latency_line(server: str, delay: int, loop: str, receivers: str, events: int, w: Window,
                 ratio: float, tail: str = "") -> str:
    per_1k = "".join(f"{c / events * 1000:>7.3f}" for c in w.cpu)
    return (f"{server:<11}{delay:>4}ms  {loop:<16}{receivers:>10}{events:>9,}{w.seconds:>8.1f}"
            f"{events / w.seconds:>9,.0f}{w.calls / w.seconds:>8,.0f}"
            f"{f'{w.mean_in_flight:.1f}/{w.max_in_flight}':>11}{ratio:>8.2f}{per_1k:>31}"
            f"{sum(w.cpu) / w.seconds:>6.2f}{tail}")


def receivers_used(log: Path, asked: str) -> str:
    """The receivers the poller ran with: its summary's `receivers_max` when it reports one."""
    found = re.findall(r"receivers_max=(\d+)", log.read_text(errors="replace"))
    return found[-1] if found else asked


def bench_latency(python: Path | None, servers: list[str], delays: list[int], n: int, bare_n: int,
                  receivers: int | None, run: Run) -> list[tuple[str, int, float]]:
    """Per server and added delay: the bare loop (on `bare_n` events; all `n` without delay), then
    one poller process on `n`, each on a fresh queue through the same proxy. Returns (server,
    delay, poller/bare events/s) for the summary."""
    extra = ("--drain-wait-seconds", "1", *(("--receivers", str(receivers)) if receivers else ()))
    asked = str(receivers) if receivers else "default"
    ratios = []
    rates: dict[str, list[tuple[int, float, float, int]]] = {}  # server → (delay, poller, bare, dup+missing)
    print(LATENCY_HEADER)
    for name in servers:
        with sqs_server(name, python) as (endpoint, cpu), tempfile.TemporaryDirectory() as tmp, \
                FaultProxy(endpoint, FaultPlan(), 0, Path(tmp) / "faults.jsonl") as proxy:
            warm = new_queue(endpoint)  # JIT, imports and caches of the server, then of the proxy
            send_all(endpoint, warm, bodies(4000, start=90_000_000))
            bare_loop(endpoint, warm, wait=1)
            bare_loop(proxy.endpoint, warm, wait=1)
            for delay in delays:
                proxy.set_delay(delay)
                count = bare_n if delay else n
                url = new_queue(endpoint)
                send_all(endpoint, url, bodies(count, start=delay * 1_000_000))
                bare, (got, _, _) = measured(proxy, cpu, partial(bare_loop, proxy.endpoint, url, 1))
                bare_rate = got / bare.seconds
                print(latency_line(name, delay, "bare loop", "1", got, bare, 1.0), flush=True)
                url, changelog = new_queue(endpoint), f"{tmp}/changelog-{delay}"
                send_all(endpoint, url, bodies(n, start=500_000_000 + delay * 1_000_000))
                poll, _ = measured(proxy, cpu, partial(drain, proxy.endpoint, url, changelog, 1,
                                                       Path(tmp), extra))
                rows, unique, commits = changelog_counts(changelog)
                ratio = unique / poll.seconds / bare_rate
                ratios.append((name, delay, ratio))
                rates.setdefault(name, []).append((delay, unique / poll.seconds, bare_rate,
                                                   rows - unique + n - unique))
                log = Path(tmp) / "poll-1-0.log"
                print(latency_line(name, delay, "lakeinlet-poll", receivers_used(log, asked), unique,
                                   poll, ratio, f"{commits:>8,}{rows - unique:>5,}{n - unique:>8,}"),
                      flush=True)
    at = " / ".join(str(d) for d in delays)
    run.row(f"one poller against SQS calls that each take a network round trip ({n:,} events a poller "
            f"run; the fault proxy adds {at} ms to every SQS call)",
            "; ".join(f"{name}: " + " / ".join(f"{p:,.0f}" for _, p, _, _ in got) + f" events/s at {at} ms"
                      for name, got in rates.items())
            + f"; {sum(x for got in rates.values() for *_, x in got)} duplicate or missing events",
            "the bare Receive(10)+DeleteMessageBatch loop, one call at a time: "
            + "; ".join(f"{name} " + " / ".join(f"{b:,.0f}" for _, _, b, _ in got)
                        for name, got in rates.items())
            + f" ({bare_n:,} events when delayed, {n:,} without)",
            "; ".join(f"{name} " + " / ".join(f"{p / b:.2f}x" for _, p, b, _ in got)
                      for name, got in rates.items())
            + " the bare loop", rates=rates)
    return ratios


GOALS = {0: 0.9, 15: 4.0, 40: 8.0}


def main() -> int:
    """Latency mode (default): per SQS server (LocalStack, ElasticMQ) and per delay added to each
    call by the fault proxy in passthrough (0, 15, 40 ms: none, in-region, cross-region), the bare
    loop and one `lakeinlet-poll` process, each through the proxy, each timed from its first
    receive to its last delete as the proxy saw them. Processes mode: 1, 2, 4 pollers on one
    queue, straight to LocalStack. Every server, and the proxy, listens on 127.0.0.1 only and
    shares the machine's cores with the loops, which the figures include."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("latency", "processes", "all"), default="latency")
    ap.add_argument("--quick", action="store_true",
                    help="20,000 events (bare loop with a delay: 2,000)")
    ap.add_argument("--events", type=int, help="events per poller run (default: latency 100,000; "
                    "processes 250,000)")
    ap.add_argument("--bare-events", type=int, help="events for the bare loop when a delay is added "
                    "(default 10,000: it runs at about 10 events per round trip; without delay it "
                    "drains as many as the poller)")
    ap.add_argument("--servers", default="localstack,elasticmq", help="latency mode's SQS servers")
    ap.add_argument("--delays", default="0,15,40", help="latency mode's added ms per call")
    ap.add_argument("--receivers", type=int, help="latency mode: pass --receivers N to the poller "
                    "(default: the poller's own default)")
    ap.add_argument("--processes", default="1,2,4", help="processes mode's poller counts")
    add_json_flag(ap)
    args = ap.parse_args()
    run = Run("Event source")
    os.environ.update({k: os.environ.get(k, v) for k, v in TEST_CREDENTIALS.items()})
    os.environ.pop("AWS_ENDPOINT_URL", None)
    servers = [s for s in args.servers.split(",") if s]
    python = None
    if args.mode != "latency" or "localstack" in servers:
        python = venv_or_skip(WORK, "LocalStack figures")
        if python is None:
            servers = [s for s in servers if s != "localstack"]
    if args.mode in ("processes", "all") and python is not None:
        n = 20_000 if args.quick else args.events or 250_000
        bench_processes(python, n, [int(c) for c in args.processes.split(",")], run)
    if args.mode in ("latency", "all") and servers:
        n = args.events or (20_000 if args.quick else 100_000)
        bare_n = args.bare_events or (2_000 if args.quick else 10_000)
        delays = [int(d) for d in args.delays.split(",")]
        print(f"\n== latency: {n:,} events a poller run, bare loop {bare_n:,} with a delay "
              f"({n:,} without); servers {servers}, delays {delays} ms; {load()} ==")
        ratios = bench_latency(python, servers, delays, n, bare_n, args.receivers, run)
        print("seconds: first ReceiveMessage arriving at the proxy to the last DeleteMessageBatch "
              "answered; calls/s: Receive + DeleteBatch (+ ChangeVisibilityBatch) calls a second; "
              "in flight: SQS calls at once, mean over those seconds / most; CPU s/1k: CPU seconds "
              "per 1,000 events of the server, the proxy and the client (the poller process: its "
              "start-up included); cores: their CPU over the loop's seconds (the machine has "
              f"{os.cpu_count()}, shared with whatever else runs); dup: rows whose event id is "
              "already in the changelog; missing: events sent but not in the changelog")
        for name, delay, ratio in ratios:
            goal = GOALS.get(delay)
            verdict = "" if goal is None else f" (goal ≥ {goal}x: {'met' if ratio >= goal else 'MISSED'})"
            print(f"{name} {delay} ms: poller / bare loop = {ratio:.2f}x{verdict}")
    print(load())
    run.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
