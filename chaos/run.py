"""One chaos run: an emulator, the fault proxy in front of it, one target format, the workload,
three pollers and two loaders killed at random, then a clean convergence and the checker. The jobs
talk only to the proxy; provisioning, the workload and the checker only to the emulator."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chaos import jobs
from chaos.chaos_plan import chaos_plan
from chaos.checker import Observed, check
from chaos.killer import Killer
from chaos.observed import Location, changelog_refs, queue_left, target_commits, target_rows
from chaos.processes import Supervisor
from chaos.proxy import FaultProxy
from chaos.run_result import RunResult, collect
from chaos.workload import NOTIFIED_PREFIX, QUIET_PREFIX, Workload, WorkloadSettings
from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer, Stack, provision
from lakeinlet.queue_settings import QueueSettings

QUEUE = QueueSettings(visibility_timeout_seconds=jobs.VISIBILITY_TIMEOUT, receive_wait_time_seconds=2,
                      max_receive_count=10)
"""maxReceiveCount 10, not 5: under this much chaos (a receive answer lost, a poller killed) a
healthy message may be received 5 times; SQS would then park it in the DLQ by design, which the
checker counts as a message lost to the changelog."""


@dataclass(frozen=True)
class RunSettings:
    """One run's choices; everything random comes from `seed`."""

    index: int
    seed: int
    target_format: str
    source_format: str
    chaos_seconds: float
    fault_rate: float
    kill_every: dict[str, float] = field(default_factory=lambda: {"poller": 10.0, "loader": 120.0})
    pollers: int = 3
    loaders: int = 2
    backfill_every: float = 45.0
    maintainers: int = 1
    """`maintain` processes beside the loaders, each started again as soon as it ends."""
    converge_timeout: float = 240.0
    workload: WorkloadSettings = field(default_factory=WorkloadSettings)
    jars: str | None = None


def execute(settings: RunSettings, out: Path, say: Callable[[str], None] = print) -> RunResult:
    """Run one chaos run in `out` (logs, fault log, result) and return what it found: chaos
    (`_chaos`), convergence (`_converge`), then the check, which reads the outcome straight from
    the emulator (see `observed`) and compares it with the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(settings.seed)
    with MotoServer(log=str(out / "moto.log")) as moto:
        stack = provision(moto.endpoint, bucket=f"land-{settings.index}", queue=f"events-{settings.index}",
                          prefix=NOTIFIED_PREFIX, settings=QUEUE)
        lake = f"lake-{settings.index}"
        client("s3", AwsSection(endpoint_url=moto.endpoint)).create_bucket(Bucket=lake)
        plan = chaos_plan(settings.fault_rate, enabled=False)
        with FaultProxy(moto.endpoint, plan, settings.seed, out / "faults.jsonl") as proxy:
            return _run(settings, out, rng, moto, stack, lake, proxy, say)


def _tables(settings: RunSettings, endpoint: str, stack: Stack, lake: str, out: Path) -> jobs.RunTables:
    queue_url = stack.queue_url.replace(stack.endpoint, endpoint)
    return jobs.RunTables(endpoint, queue_url, stack.bucket, lake, settings.target_format,
                          settings.source_format, out / "iceberg-catalog.db")


def _run(settings: RunSettings, out: Path, rng: random.Random, moto: MotoServer, stack: Stack,
         lake: str, proxy: FaultProxy, say: Callable[[str], None]) -> RunResult:
    tables = _tables(settings, proxy.endpoint, stack, lake, out)
    supervisor = Supervisor(out / "logs", jobs.job_env(settings.jars))
    aws = AwsSection(endpoint_url=moto.endpoint)
    workload = Workload(client("s3", aws), client("sqs", aws), stack.bucket, stack.queue_url,
                        stack.region, settings.workload, random.Random(rng.random()))
    times: dict[str, float] = {}
    try:
        t0 = time.monotonic()
        _chaos(settings, tables, supervisor, workload, proxy, rng, say)
        times["chaos"] = time.monotonic() - t0
        converged = _converge(settings, tables, supervisor, stack, say)
        times["converge"] = time.monotonic() - t0 - times["chaos"]
        loc = Location(moto.endpoint, settings.target_format, tables.table, tables.changelog,
                       iceberg_db=str(tables.iceberg_db))
        observed = Observed(target_rows(loc), changelog_refs(loc), queue_left(moto.endpoint, stack.queue_url),
                            queue_left(moto.endpoint, stack.dlq_url))
        report = check(workload.manifest.snapshot(), observed)
        times["check"] = time.monotonic() - t0 - times["chaos"] - times["converge"]
        return collect(settings, report, proxy.faults(all_generations=True), supervisor, workload,
                       target_commits(loc), converged, times)
    finally:
        supervisor.stop_tending()
        supervisor.stop_all(sig=signal.SIGKILL, timeout=10)


def _chaos(settings: RunSettings, t: jobs.RunTables, supervisor: Supervisor, workload: Workload,
           proxy: FaultProxy, rng: random.Random, say: Callable[[str], None]) -> None:
    """Jobs up, workload on, faults on, killer on (the supervisor restarts what it kills), and a
    backfill of the un-notified prefix now and then (through the proxy too), for `chaos_seconds`;
    then all of it off."""
    for i in range(settings.pollers):
        supervisor.add(f"poller-{i}", "poller", jobs.poller_argv(t))
    for i in range(settings.loaders):
        supervisor.add(f"loader-{i}", "loader", jobs.loader_argv(t))
    for i in range(settings.maintainers):
        supervisor.add(f"maintain-{i}", "maintain", jobs.maintain_argv(t))
    supervisor.start_tending()
    killer = Killer(supervisor, settings.kill_every, random.Random(rng.random()))
    workload.start()
    proxy.enable(True)
    killer.start()
    say(f"  chaos for {settings.chaos_seconds:.0f} s: {settings.pollers} pollers, {settings.loaders} "
        f"{settings.target_format} loaders, {settings.maintainers} maintain processes, faults at "
        f"{settings.fault_rate:.0%} a request")
    deadline, backfills = time.monotonic() + settings.chaos_seconds, 0
    while time.monotonic() < deadline:
        time.sleep(min(settings.backfill_every, max(0.0, deadline - time.monotonic())))
        if time.monotonic() < deadline - 5:
            backfills += 1
            argv = jobs.backfill_argv(t, QUIET_PREFIX)
            supervisor.add(f"backfill-{backfills}", "backfill", argv, once=True)
    killer.stop()
    workload.stop()
    proxy.enable(False)


def _converge(settings: RunSettings, t: jobs.RunTables, supervisor: Supervisor, stack: Stack,
              say: Callable[[str], None]) -> bool:
    """Faults off: the chaos-era jobs stopped (pollers with SIGTERM, loaders with SIGKILL), clean
    pollers until the queue is empty (messages a killed poller held come back after the visibility
    timeout), a clean backfill, a clean drain. True if all ended well."""
    supervisor.stop_all("poller", signal.SIGTERM, timeout=30)
    supervisor.stop_all("loader", signal.SIGKILL, timeout=10)
    supervisor.stop_all("backfill", signal.SIGKILL, timeout=10)
    supervisor.stop_all("maintain", signal.SIGKILL, timeout=10)
    for i in range(settings.pollers):
        supervisor.add(f"clean-poller-{i}", "clean-poller", jobs.poller_argv(t))
    empty = _wait_empty(stack, settings.converge_timeout)
    codes = supervisor.stop_all("clean-poller", signal.SIGTERM, timeout=60)
    say(f"  converge: queue empty={empty}, pollers stopped {sorted(set(codes.values()), key=str)}")
    env = supervisor.env
    backfill = _call(jobs.backfill_argv(t, QUIET_PREFIX), env, supervisor.log_dir / "clean-backfill.log", 300)
    drain = _call(jobs.loader_argv(t, "--drain"), env, supervisor.log_dir / "clean-drain.log", 900)
    say(f"  converge: backfill exit {backfill}, drain exit {drain}")
    # -SIGTERM: a poller still starting (no handler yet, nothing received): the queue was empty
    return empty and backfill == 0 and drain == 0 and all(c in (0, -signal.SIGTERM) for c in codes.values())


def _wait_empty(stack: Stack, timeout: float, settle: int = 3) -> bool:
    """True once the queue (visible + in flight + delayed) reads empty `settle` times in a row."""
    deadline, zeros = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        zeros = zeros + 1 if queue_left(stack.endpoint, stack.queue_url) == 0 else 0
        if zeros >= settle:
            return True
        time.sleep(1.0)
    return False


def _call(argv: list[str], env: dict[str, str], log: Path, timeout: float) -> int:
    with open(log, "wb") as out:
        try:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env, timeout=timeout)
            return done.returncode
        except subprocess.TimeoutExpired:
            return -1
