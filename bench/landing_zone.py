"""Issue 39's landing zone: N small objects (half JSON lines, half Parquet) with Spark's artefacts, their
S3 events on a queue; lakeinlet's poll + load beside the hand-written Spark job over the same final
files, interleaved in one run on moto over s3a, local[2]; figures, ratios and where the time goes."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import loader_common
from _landing_profile import CountingQueue, RequestLog, Tally, jobs_so_far, spent_lines
from _source_common import bodies
from loader_common import loader_config, timed
from loader_profile import step_timer
from poller import bare_loop, send_all
from report import Run, add_json_flag

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.dev.emulator import provision
from lakeinlet.dev.samples import SCHEMA_DDL, encode, make_rows
from lakeinlet.incremental.settings import PlanSection
from lakeinlet.incremental.wiring import build
from lakeinlet.sources.poller import Poller, PollerSettings
from lakeinlet.sources.sqs import SqsQueue

FORMATS = {"json": "json", "parquet": "parquet"}
"""Route (prefix) → source format: two loader runs, `--prefix json/ --source-format json` and
`--prefix parquet/ --source-format parquet`, as a user with one landing zone of two formats runs them."""
PER_FOLDER = 100
"""Data objects per folder: one Spark job's output, with its `_SUCCESS`."""
WORK = Path(__file__).resolve().parents[1] / ".bench"


@dataclass(frozen=True)
class Zone:
    """One landing zone: its bucket and queue, the data keys per route, and the messages queued."""

    bucket: str
    queue_url: str
    keys: dict[str, list[str]]
    messages: int
    bare_url: str


def folder_items(route: str, folder: int, count: int, rows: int) -> list[tuple[str, bytes]]:
    """One Spark job's output folder: `count` parts, a `.crc` for one part in ten, a `_temporary/`
    part left by a failed task attempt for one in fifty, and `_SUCCESS` (PUT last, as Spark does)."""
    base, ext = f"{route}/folder={folder:04d}/", {"json": "json", "parquet": "snappy.parquet"}[route]
    items: list[tuple[str, bytes]] = []
    for i in range(count):
        name = f"part-{i:05d}-{uuid.uuid4()}-c000.{ext}"
        body = encode(make_rows(folder * PER_FOLDER + i, rows), FORMATS[route])
        items.append((base + name, body))
        if i % 10 == 0:
            items.append((f"{base}.{name}.crc", b"crc\x00" + len(body).to_bytes(4, "big")))
        if i % 50 == 0:
            items.append((f"{base}_temporary/0/_temporary/attempt_{i:05d}_m_000000_1/{name}", body))
    return [*items, (base + "_SUCCESS", b"")]


def fill(endpoint: str, aws: AwsSection, objects: int, rows: int) -> Zone:
    """A fresh bucket and queue (S3 → SQS notifications on every key), the landing zone PUT to it,
    and a second queue holding as many notifications for the bare receive loop."""
    tag = uuid.uuid4().hex[:8]
    stack = provision(endpoint, bucket=f"land-{tag}", queue=f"events-{tag}")
    items: list[tuple[str, bytes]] = []
    for n, route in enumerate(FORMATS):
        share = objects // 2 + (objects % 2 if n == 0 else 0)
        for folder, start in enumerate(range(0, share, PER_FOLDER)):
            items += folder_items(route, folder, min(PER_FOLDER, share - start), rows)
    loader_common.put_many(aws, stack.bucket, items)
    keys = {r: [k for k, _ in items if k.startswith(f"{r}/") and k.rsplit("/", 1)[-1].startswith("part-")
                and "/_temporary/" not in k] for r in FORMATS}
    wait_for(aws, stack.queue_url, len(items))
    bare = client("sqs", aws).create_queue(QueueName=f"bare-{tag}")["QueueUrl"]
    send_all(endpoint, bare, bodies(len(items), bucket=stack.bucket))
    return Zone(stack.bucket, stack.queue_url, keys, len(items), bare)


def wait_for(aws: AwsSection, url: str, messages: int, timeout: float = 60) -> None:
    sqs, deadline = client("sqs", aws), time.monotonic() + timeout
    while time.monotonic() < deadline:  # moto sends notifications as it stores: a wait, not a retry
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        if int(attrs["Attributes"]["ApproximateNumberOfMessages"]) >= messages:
            return
        time.sleep(0.2)
    raise RuntimeError(f"expected {messages} messages on {url}, found fewer after {timeout:.0f} s")


def hand_job(spark: Any, zone: Zone, lake: str) -> int:
    """What a user writes without lakeinlet: per format, read the prefix (Spark skips `_temporary/`,
    `_SUCCESS` and `.crc` by its hidden-file rule; the glob keeps the format's parts) and append to
    Delta. Returns the rows written (counted after, outside the timing by the caller)."""
    for route, fmt in FORMATS.items():
        df = (spark.read.schema(SCHEMA_DDL).option("recursiveFileLookup", "true")
              .option("pathGlobFilter", f"*.{'json' if fmt == 'json' else 'parquet'}")
              .format(fmt).load(f"s3a://{zone.bucket}/{route}/"))
        df.write.format("delta").mode("append").save(f"s3a://{lake}/hand_{route}")
    return 0


def poll(aws: AwsSection, zone: Zone, lake: str, receivers: int, queue: Counter[str]) -> Any:
    """The poller draining the queue into the changelog (`lakeinlet-poll --until-empty`); `queue`
    gets its queue calls by kind."""
    settings = PollerSettings(wait_seconds=1, receivers=receivers, until_empty=True)
    changelog = OpenDeltaChangelog(f"s3a://{lake}/changelog", aws)
    counting = CountingQueue(SqsQueue.from_config(zone.queue_url, aws))
    summary = Poller(queue=counting, changelog=changelog, settings=settings).run()
    queue.update(counting.calls)
    return summary


def load(spark: Any, aws: AwsSection, lake: str, reports: list[Any], max_files: int) -> dict[str, int]:
    """Both loader runs draining the changelog into their Delta tables; their statuses summed."""
    statuses: dict[str, int] = {}
    for route, fmt in FORMATS.items():
        cfg = loader_config(aws, lake, f"lake_{route}", fmt=fmt, prefix=(f"{route}/",), max_files=max_files)
        summary = build(cfg, spark).loader().drain(progress=reports.append)
        for status, n in summary.statuses.items():
            statuses[status] = statuses.get(status, 0) + n
    return statuses


@dataclass
class Round:
    """One round's seconds per phase, and what lakeinlet's phases did."""

    hand: float = 0.0
    poll: float = 0.0
    load: float = 0.0
    bare: float = 0.0
    tallies: dict[str, Tally] = field(default_factory=dict)
    batches: int = 0
    steps: dict[str, float] = field(default_factory=dict)
    poll_summary: Any = None
    queue: Counter[str] = field(default_factory=Counter)
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def both(self) -> float:
        return self.poll + self.load


@dataclass(frozen=True)
class Knobs:
    """lakeinlet's settings the bench may change: the poller's receivers, the loader's --max-files."""

    receivers: int = PollerSettings.receivers
    max_files: int = PlanSection.max_files


def one_round(spark: Any, aws: AwsSection, endpoint: str, log: RequestLog, n: int, rows: int,
              knobs: Knobs, hand_first: bool) -> Round:
    """One landing zone, then the hand job and lakeinlet (poll, then load) in the given order."""
    zone, lake = fill(endpoint, aws, n, rows), loader_common.bucket(aws, "lake")
    out = Round()

    def measured(name: str, fn: Callable[[], Any]) -> tuple[float, Any]:
        mark, jobs = log.mark(), jobs_so_far(spark)
        seconds, result = timed(fn)
        out.tallies[name] = log.since(mark, zone.bucket, jobs_so_far(spark) - jobs)
        return seconds, result

    def lakeinlet_side() -> None:
        out.poll, out.poll_summary = measured(
            "poll", lambda: poll(aws, zone, lake, knobs.receivers, out.queue))
        out.bare = measured("bare", lambda: bare_loop(endpoint, zone.bare_url, wait=1))[0]
        reports: list[Any] = []
        spent: defaultdict[str, list[float]] = defaultdict(list)
        with step_timer(spent):
            out.load, out.statuses = measured(
                "load", lambda: load(spark, aws, lake, reports, knobs.max_files))
        out.batches = len(reports)
        out.steps = {k: sum(r.seconds.get(k, 0.0) for r in reports) for k in ("plan", "read", "commit")}
        out.steps |= {k: sum(v) for k, v in spent.items()}

    for side in (["hand", "lakeinlet"] if hand_first else ["lakeinlet", "hand"]):
        if side == "hand":
            out.hand, _ = measured("hand", lambda: hand_job(spark, zone, lake))
        else:
            lakeinlet_side()
    check(spark, zone, lake, out)
    return out


def check(spark: Any, zone: Zone, lake: str, out: Round) -> None:
    """Both sides hold the same rows and every data object was loaded (outside the timings)."""
    objects = sum(len(v) for v in zone.keys.values())
    if out.statuses.get("loaded", 0) != objects:
        raise RuntimeError(f"lakeinlet loaded {out.statuses.get('loaded', 0)} of {objects} data objects "
                           f"({out.statuses}); expected every one")
    for route in FORMATS:
        ours = spark.read.format("delta").load(f"s3a://{lake}/lake_{route}").count()
        hand = spark.read.format("delta").load(f"s3a://{lake}/hand_{route}").count()
        if ours != hand:
            raise RuntimeError(f"{route}: lakeinlet's table holds {ours} rows, the hand job's {hand}")


def ratio(base: float, ours: float) -> float:
    return base / ours if ours else float("nan")


def print_round(i: int, r: Round, hand_first: bool) -> None:
    ps, st = r.poll_summary, r.steps
    first = "hand job" if hand_first else "lakeinlet"
    print(f"round {i + 1} ({first} first, load avg {os.getloadavg()[0]:.2f}): "
          f"hand job {r.hand:.2f} s | poll {r.poll:.2f} s ({ps.messages} messages, {ps.commits} commits; "
          f"bare Receive(10)+DeleteBatch loop over as many {r.bare:.2f} s) | load {r.load:.2f} s "
          f"({r.batches} batches: plan {st['plan']:.2f} s, HEAD+read+checks {st['read']:.2f} s, "
          f"write+commit+ledger {st['commit']:.2f} s) | hand/load {ratio(r.hand, r.load):.2f}x, "
          f"hand/(poll+load) {ratio(r.hand, r.both):.2f}x", flush=True)


def summarise(rounds: list[Round], n: int, run: Run) -> None:
    keys = ("hand", "poll", "bare", "load", "both")
    med = {k: statistics.median(getattr(r, k) for r in rounds) for k in keys}
    speed = {k: statistics.median(ratio(r.hand, getattr(r, k)) for r in rounds) for k in ("load", "both")}
    poll_vs_bare = statistics.median(ratio(r.bare, r.poll) for r in rounds)
    print(f"\n{'phase (medians)':<18}{'lakeinlet s':>12}{'baseline s':>11}{'baseline / lakeinlet':>22}")
    print(f"{'poll':<18}{med['poll']:>12.2f}{med['bare']:>11.2f}{poll_vs_bare:>21.2f}x  (bare receive loop)")
    for name, key in (("load", "load"), ("poll + load", "both")):
        print(f"{name:<18}{med[key]:>12.2f}{med['hand']:>11.2f}{speed[key]:>21.2f}x  (hand-written job)")
    print("\nwhere lakeinlet's time goes (last round; requests counted at the moto server):")
    last = rounds[-1]
    for line in spent_lines(last.tallies, last.steps, last.poll_summary, last.queue, n):
        print("  " + line)
    what = (f"{n:,} small objects (half JSON lines, half Parquet) with Spark's artefacts, "
            f"median of {len(rounds)}")
    for label, key in (("load", "load"), ("poll + load", "both")):
        run.row(f"landing zone, {label}: {what}", f"{med[key]:.1f} s",
                f"hand-written Spark job over the final files: {med['hand']:.1f} s",
                f"{speed[key]:.2f}x (goal ≥ 1.0x)", seconds=[getattr(r, key) for r in rounds],
                hand=[r.hand for r in rounds], batches=[r.batches for r in rounds],
                steps=[{k: round(v, 2) for k, v in r.steps.items()} for r in rounds],
                requests={phase: {f"{role} {op}": n for (role, op), n in t.requests.items()}
                          for phase, t in last.tallies.items()},
                spark_jobs={phase: t.jobs for phase, t in last.tallies.items()})
    run.row(f"landing zone, poll: {last.poll_summary.messages:,} messages on moto, median of {len(rounds)}",
            f"{med['poll']:.1f} s", f"bare Receive(10)+DeleteMessageBatch loop: {med['bare']:.1f} s",
            f"{poll_vs_bare:.2f}x", seconds=[r.poll for r in rounds], bare=[r.bare for r in rounds])


SIZES = {"full": (1000, 5, 3), "quick": (100, 5, 1), "smoke": (8, 2, 1)}
"""objects, rows per object, rounds."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="100 objects, one round")
    ap.add_argument("--smoke", action="store_true", help="8 objects: it runs; its figures mean nothing")
    ap.add_argument("--objects", type=int, default=0, help="data objects (default 1000)")
    ap.add_argument("--rows", type=int, default=0, help="rows per object (default 5)")
    ap.add_argument("--repeat", type=int, default=0, help="rounds, alternating which side runs first")
    ap.add_argument("--receivers", type=int, default=Knobs.receivers, help="poller receivers (%(default)s)")
    ap.add_argument("--max-files", type=int, default=Knobs.max_files,
                    help="the loader's --max-files (%(default)s): the changelog rows a batch takes, the "
                         "other format's objects and the artefacts included")
    add_json_flag(ap)
    args = ap.parse_args(argv)
    n, rows, repeat = SIZES["smoke" if args.smoke else "quick" if args.quick else "full"]
    n, rows, repeat = args.objects or n, args.rows or rows, args.repeat or repeat
    run = Run("Landing zone", [str(Path(__file__)), *(sys.argv[1:] if argv is None else argv)])
    WORK.mkdir(exist_ok=True)
    log_path = WORK / f"landing-moto-{uuid.uuid4().hex[:6]}.log"
    with loader_common.stack(every=True, log=str(log_path)) as (server, aws, spark):
        log = RequestLog(log_path)
        print(f"Spark {spark.version}, local[2], moto over s3a; {n} objects x {rows} rows, "
              f"{repeat} round(s); "
              f"load avg at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        knobs = Knobs(args.receivers, args.max_files)
        if not args.smoke:  # a warm-up round, not counted: the JVM's first use of each path
            one_round(spark, aws, server.endpoint, log, min(n, 10), rows, knobs, True)
        rounds = []
        for i in range(repeat):
            rounds.append(one_round(spark, aws, server.endpoint, log, n, rows, knobs, i % 2 == 0))
            print_round(i, rounds[-1], i % 2 == 0)
        summarise(rounds, n, run)
    print(f"load avg at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    run.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
