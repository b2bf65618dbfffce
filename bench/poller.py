"""Event source throughput, figures and ratios, not pass/fail: the poller in process (against the
same loop without a changelog), with latency added to each queue call, on moto and on LocalStack
(each beside a bare Receive(10)+DeleteMessageBatch loop in the same run)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from _localstack import LocalStack, venv_or_skip  # noqa: E402
from _source_common import WORK, NullChangelog, bodies, cpu_seconds, load, median, peak_rss_mb  # noqa: E402
from report import Run, add_json_flag  # noqa: E402

from lakeinlet.aws import AwsSection, client  # noqa: E402
from lakeinlet.changelog.writer import OpenDeltaChangelog  # noqa: E402
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer, free_port  # noqa: E402
from lakeinlet.sources.memory import InMemoryQueue  # noqa: E402
from lakeinlet.sources.poller import Poller, PollerSettings  # noqa: E402
from lakeinlet.sources.ports import EntryFailure, Message, Queue  # noqa: E402
from lakeinlet.sources.sqs import SqsQueue  # noqa: E402


@dataclass(frozen=True)
class Sizes:
    """Messages per stage: in process (and its alternating pairs, and the smaller batches' runs),
    with latency, on moto, on LocalStack."""

    inproc: int
    rounds: int
    small: tuple[int, int]
    latency: int
    moto: int
    localstack: int


FULL = Sizes(100_000, 3, (3000, 20000), 10_000, 500, 100_000)
QUICK = Sizes(20_000, 1, (1000, 3000), 3000, 200, 10_000)
SMOKE = Sizes(300, 1, (20, 200), 100, 20, 100)
"""--smoke: tiny inputs, seconds; proves the bench runs (bench/smoke.py), its figures mean nothing."""


class TimedQueue:
    """Wraps a queue: records when the last delete returned (time to last ack) and, optionally,
    adds a fixed round-trip latency to every call (sleeping, as a network wait does)."""

    def __init__(self, inner: Queue, latency: float = 0.0) -> None:
        self.inner, self.latency, self.last_delete = inner, latency, 0.0

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        time.sleep(self.latency)
        return self.inner.receive(max_messages, wait_seconds, visibility_timeout)

    def change_visibility(self, handles: Sequence[str], timeout: int) -> list[EntryFailure]:
        time.sleep(self.latency)
        return self.inner.change_visibility(handles, timeout)

    def delete(self, handles: Sequence[str]) -> list[EntryFailure]:
        time.sleep(self.latency)
        failures = self.inner.delete(handles)
        self.last_delete = time.monotonic()
        return failures

    def depths(self) -> Any:
        return self.inner.depths()


def stage_inproc(batch_size: int, events: int, null: bool) -> dict[str, Any]:
    """One in-process run (called in a child process): events/s, CPU and peak RSS.

    CPU is the process's user+sys over `Poller.run` only: interpreter start-up, imports and
    the first `pa.array` (which imports pandas when it is installed, ~0.5 s) are outside it, for
    both loops alike.
    """
    pa.array([1])  # one-off import cost, outside the measured run for both loops
    queue = InMemoryQueue()
    queue.send_batch(bodies(events))
    with tempfile.TemporaryDirectory() as tmp:
        changelog = NullChangelog() if null else OpenDeltaChangelog(str(Path(tmp) / "changelog"))
        settings = PollerSettings(wait_seconds=0, receivers=4, batch_size=batch_size,
                                  batch_seconds=60, until_empty=True)
        cpu0, started = cpu_seconds(), time.monotonic()
        summary = Poller(queue=queue, changelog=changelog, settings=settings).run()
        seconds, cpu = time.monotonic() - started, cpu_seconds() - cpu0
    assert summary.rows == events, f"expected {events} rows, committed {summary.rows}"
    return {"events": events, "seconds": seconds, "rate": events / seconds, "commits": summary.commits,
            "cpu_per_1k": cpu / events * 1000, "peak_rss_mb": peak_rss_mb()}


def run_child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, "--stage", *args], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


INPROC_HEADER = (f"{'changelog':<10}{'batch':>6}{'events':>8}{'commits':>8}{'seconds':>8}{'events/s':>10}"
                 f"{'CPU s/1k ev':>12}{'peak RSS MB':>12}  load")


def inproc_line(name: str, batch: int, r: dict[str, Any]) -> str:
    return (f"{name:<10}{batch:>6}{r['events']:>8}{r['commits']:>8}{r['seconds']:>8.2f}{r['rate']:>10,.0f}"
            f"{r['cpu_per_1k']:>12.4f}{r['peak_rss_mb']:>12.0f}  {load().split(' (')[0]}")


def bench_inproc(sizes: Sizes, run: Run) -> None:
    """Item 1: the Delta changelog against the same loop with no changelog, batch 1000, in
    alternating pairs (each run in its own process); then smaller batches for reference."""
    n, rounds = sizes.inproc, sizes.rounds
    print(f"\n== in process: parse → commit → ack (in-memory queue, 4 receivers), {load()} ==")
    print(INPROC_HEADER)
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for _ in range(rounds):
        delta = run_child("inproc", "1000", str(n), "delta")
        print(inproc_line("delta", 1000, delta))
        none = run_child("inproc", "1000", str(n), "null")
        print(inproc_line("none", 1000, none))
        pairs.append((delta, none))
    cpu = median([d["cpu_per_1k"] / z["cpu_per_1k"] for d, z in pairs])
    rate = median([d["rate"] / z["rate"] for d, z in pairs])
    print(f"Delta changelog vs none, batch 1000 (median of {rounds} pair(s) in this run): CPU per event "
          f"{cpu:.2f}x (goal ≤ 1.25x), events/s {rate:.2f} (goal ≥ 0.8)")
    delta = {k: median([d[k] for d, _ in pairs]) for k in ("rate", "cpu_per_1k", "peak_rss_mb")}
    none = {k: median([z[k] for _, z in pairs]) for k in ("rate", "cpu_per_1k", "peak_rss_mb")}
    run.row(f"poller in process, batch 1000 ({rounds} alternating pair(s) of {n:,} events; medians)",
            f"{delta['rate'] / 1000:.1f}k events/s, {delta['cpu_per_1k']:.3f} CPU s per 1k events, "
            f"{delta['peak_rss_mb']:.0f} MB peak RSS",
            f"the same loop without a changelog: {none['rate'] / 1000:.1f}k events/s, "
            f"{none['cpu_per_1k']:.3f} CPU s, {none['peak_rss_mb']:.0f} MB",
            f"CPU per event {cpu:.2f}x (pairs "
            + ", ".join(f"{d['cpu_per_1k'] / z['cpu_per_1k']:.2f}" for d, z in pairs)
            + f"), {rate:.2f} of the events/s",
            pairs=pairs)
    for batch, events in zip((10, 100), sizes.small, strict=True):
        print(inproc_line("delta", batch, run_child("inproc", str(batch), str(events), "delta")))


def send_all(endpoint: str, url: str, payload: list[str], threads: int = 8) -> float:
    """SendMessageBatch from `threads` threads; returns seconds."""
    queue = SqsQueue(client("sqs", AwsSection(endpoint_url=endpoint), max_pool_connections=64), url)
    parts = [payload[i:i + 1000] for i in range(0, len(payload), 1000)]
    started = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(queue.send_batch, parts))
    return time.monotonic() - started


def bare_loop(endpoint: str, url: str, wait: int) -> tuple[int, float, float]:
    """Receive(10) + DeleteMessageBatch with boto3, one thread, until an empty long poll.
    Returns (messages, seconds to the last delete, seconds to empty)."""
    sqs = client("sqs", AwsSection(endpoint_url=endpoint))
    started, last, n = time.monotonic(), 0.0, 0
    while msgs := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10,
                                      WaitTimeSeconds=wait).get("Messages", []):
        sqs.delete_message_batch(QueueUrl=url, Entries=[
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)])
        n, last = n + len(msgs), time.monotonic()
    return n, last - started, time.monotonic() - started


def bare_port_loop(queue: Queue, wait: int) -> tuple[int, float, float]:
    """The same bare loop through the queue port (for the in-process queue)."""
    started, last, n = time.monotonic(), 0.0, 0
    while msgs := queue.receive(10, wait, 300):
        queue.delete([m.receipt_handle for m in msgs])
        n, last = n + len(msgs), time.monotonic()
    return n, last - started, time.monotonic() - started


def poller_drain(queue: Queue, batch_size: int, receivers: int) -> tuple[int, float, float]:
    """Drain with the poller into a fresh local Delta changelog; same figures as the bare loop."""
    timed = TimedQueue(queue)
    settings = PollerSettings(wait_seconds=1, visibility_timeout=300, receivers=receivers,
                              batch_size=batch_size, batch_seconds=30, until_empty=True)
    with tempfile.TemporaryDirectory() as tmp:
        changelog = OpenDeltaChangelog(tmp + "/changelog")
        started = time.monotonic()
        summary = Poller(queue=timed, changelog=changelog, settings=settings).run()
        elapsed = time.monotonic() - started
        unique = len(set(pa.table(changelog.read_versions(-1)).column("event_id").to_pylist()))
    if unique != summary.rows:
        print(f"note: {summary.rows - unique} of {summary.rows} rows are redeliveries (same event_id): "
              "the emulator handed one message to two concurrent receivers")
    return summary.rows, timed.last_delete - started, elapsed


def report(label: str, poller: tuple[int, float, float], bare: tuple[int, float, float],
           receivers: int, batch_size: int) -> float:
    """Print the two loops' figures; returns the poller's throughput over the bare loop's."""
    print(f"{'loop':<44}{'messages':>9}{'to last ack s':>15}{'msg/s':>9}{'to empty s':>12}")
    for name, (n, to_ack, to_empty) in ((f"poller ({receivers} receivers, batch {batch_size}, Delta)",
                                         poller), ("bare Receive(10)+DeleteBatch, 1 thread", bare)):
        print(f"{name:<44}{n:>9,}{to_ack:>15.2f}{n / to_ack:>9,.0f}{to_empty:>12.2f}")
    ratio = (poller[0] / poller[1]) / (bare[0] / bare[1])
    print(f"{label}: poller / bare loop throughput = {ratio:.2f}x (to last ack; 'to empty' adds the "
          "final empty long poll of 1 s)")
    return ratio


def json_row(run: Run, what: str, poller: tuple[int, float, float], bare: tuple[int, float, float],
             receivers: int, ratio: float) -> None:
    run.row(what, f"{poller[0] / poller[1]:,.0f} messages/s ({receivers} receivers)",
            f"the bare Receive(10)+DeleteMessageBatch loop: {bare[0] / bare[1]:,.0f} messages/s",
            f"{ratio:.2f}x", poller=poller, bare=bare)


def bench_latency(sizes: Sizes, run: Run) -> None:
    n, latency = sizes.latency, 0.02
    print(f"\n== in process with {latency * 1000:.0f} ms per queue call (an SQS round trip): "
          f"{n:,} messages, poller vs bare loop ==")
    results = []
    for drain in (lambda q: poller_drain(q, 1000, 4), lambda q: bare_port_loop(q, 1)):
        queue = InMemoryQueue()
        queue.send_batch(bodies(n))
        results.append(drain(TimedQueue(queue, latency)))
    ratio = report("in process + latency", results[0], results[1], 4, 1000)
    json_row(run, f"poller in process with {latency * 1000:.0f} ms per queue call ({n:,} messages)",
             results[0], results[1], 4, ratio)


def compare(label: str, endpoint: str, n: int, batch_size: int, receivers: int, run: Run) -> None:
    sqs = client("sqs", AwsSection(endpoint_url=endpoint))
    url = sqs.create_queue(QueueName=f"bench-{int(time.time() * 1000)}",
                           Attributes={"VisibilityTimeout": "300"})["QueueUrl"]
    send_all(endpoint, url, bodies(min(n, 1000), start=10_000_000))  # warm the server up
    bare_loop(endpoint, url, wait=1)
    sent = send_all(endpoint, url, bodies(n))
    poller = poller_drain(SqsQueue.from_config(url, AwsSection(endpoint_url=endpoint)), batch_size,
                          receivers)
    sent2 = send_all(endpoint, url, bodies(n, start=n))
    bare = bare_loop(endpoint, url, wait=1)
    print(f"sent {n:,} messages in {sent:.1f} s and {sent2:.1f} s (SendMessageBatch, 8 threads)")
    ratio = report(label, poller, bare, receivers, batch_size)
    json_row(run, f"poller on {label} ({n:,} messages, batch {batch_size})", poller, bare, receivers, ratio)


def bench_moto(sizes: Sizes, run: Run) -> None:
    n = sizes.moto
    print(f"\n== moto server: {n} messages, poller vs bare loop (same server, same run) ==")
    with MotoServer() as server:
        compare("moto", server.endpoint, n, batch_size=100, receivers=4, run=run)


def bench_localstack(sizes: Sizes, run: Run) -> None:
    n = sizes.localstack
    print(f"\n== LocalStack: {n:,} messages drained, poller vs bare loop ==")
    python = venv_or_skip(WORK, "LocalStack figures")
    if python is None:
        return
    with LocalStack(python, free_port(), WORK / "localstack.log") as stack:
        print(f"LocalStack on {stack.endpoint} (loopback only)")
        compare("LocalStack", stack.endpoint, n, batch_size=1000, receivers=4, run=run)


def main(argv: list[str] | None = None) -> int:
    """The stages:

    1. In process: parse → commit (local Delta changelog) → ack on the in-memory queue, at several
       batch sizes, each in its own process so its peak RSS is its own.
    2. moto server: the poller end to end beside a bare Receive(10)+DeleteMessageBatch loop on the
       same server, same run, shallow queue (moto slows sharply with depth).
    3. LocalStack (own venv, Python 3.13+: see bench/_localstack.py): 100,000 events drained by
       the poller and by the bare loop.
    """
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, a short run")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: it runs; no figures")
    parser.add_argument("--skip-localstack", action="store_true", help="skip the LocalStack stage")
    parser.add_argument("--stage", nargs=4, help=argparse.SUPPRESS)
    add_json_flag(parser)
    args = parser.parse_args(argv)
    os.environ.update({k: os.environ.get(k, v) for k, v in TEST_CREDENTIALS.items()})
    os.environ.pop("AWS_ENDPOINT_URL", None)
    if args.stage:
        _, batch, events, kind = args.stage
        print(json.dumps(stage_inproc(int(batch), int(events), kind == "null")))
        return 0
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, quick={args.quick}")
    run = Run("Event source", ["poller.py", *(sys.argv[1:] if argv is None else argv)])
    sizes = SMOKE if args.smoke else QUICK if args.quick else FULL
    bench_inproc(sizes, run)
    bench_latency(sizes, run)
    bench_moto(sizes, run)
    if args.skip_localstack:
        print("\nLocalStack stage skipped (--skip-localstack)")
    else:
        bench_localstack(sizes, run)
    run.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
