"""A bounded, seeded chaos campaign: `python -m chaos.campaign --seed N --runs R --minutes M`, runs
rotating over the target formats and alternating the source format. Exit codes: 0 every run
converged and its checker found nothing, 1 otherwise, 2 bad arguments."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from chaos.report import machine_load, render
from chaos.run import RunSettings, execute
from chaos.run_result import RunResult
from chaos.workload import WorkloadSettings
from lakeinlet.dev.emulator import TEST_CREDENTIALS

FORMATS = ("delta", "hudi", "iceberg")
SOURCES = ("parquet", "json")
RUN_OVERHEAD_SECONDS = 170.0
"""A run's time outside its chaos phase: set-up, convergence and check (two loader JVMs start, the
clean drain starts a third, killed pollers' messages return after the visibility timeout). Each
run's `seconds` in campaign.json records what those phases took."""
MIN_CHAOS_SECONDS = 30.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m chaos.campaign", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1, help="seed of everything random (default: 1)")
    p.add_argument("--runs", type=int, default=3, help="runs, rotating over the formats (default: 3)")
    p.add_argument("--minutes", type=float, default=19.0,
                   help="time budget of the whole campaign (default: 19)")
    p.add_argument("--formats", default=",".join(FORMATS), help="target formats to rotate over")
    p.add_argument("--fault-rate", type=float, default=0.12,
                   help="chance a request (of weight 1, see chaos_plan) gets a fault (default: 0.12)")
    p.add_argument("--poller-kill-every", type=float, default=10.0, help="mean seconds between poller kills")
    p.add_argument("--loader-kill-every", type=float, default=120.0, help="mean seconds between loader kills")
    p.add_argument("--maintainers", type=int, default=1,
                   help="`lakeinlet-load maintain` processes beside the loaders, each started again as "
                        "soon as it ends (default: 1; 0: none)")
    p.add_argument("--pace", type=float, default=1.0, help="seconds between workload steps (default: 1)")
    p.add_argument("--out", type=Path, default=Path(".chaos"), help="logs and results (default: .chaos/)")
    p.add_argument("--jars", default=None,
                   help="jar folder for the loaders (default: $LAKEINLET_JARS or ~/.cache/lakeinlet/jars)")
    return p


def settings_for(args: argparse.Namespace, index: int, chaos_seconds: float) -> RunSettings:
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    source = SOURCES[index % len(SOURCES)]
    return RunSettings(
        index=index, seed=args.seed * 1000 + index, target_format=formats[index % len(formats)],
        source_format=source, chaos_seconds=chaos_seconds, fault_rate=args.fault_rate,
        kill_every={"poller": args.poller_kill_every, "loader": args.loader_kill_every},
        maintainers=args.maintainers,
        workload=WorkloadSettings(source_format=source, pace_seconds=args.pace), jars=args.jars)


def chaos_budget(left_seconds: float, runs_left: int) -> float:
    """Seconds of chaos for the next run: an equal share of what is left of the campaign's budget,
    less a run's overhead (RUN_OVERHEAD_SECONDS), and at least MIN_CHAOS_SECONDS."""
    return max(MIN_CHAOS_SECONDS, left_seconds / runs_left - RUN_OVERHEAD_SECONDS)


def validate(args: argparse.Namespace) -> list[str]:
    problems = []
    if args.runs < 1:
        problems.append(f"--runs: expected at least 1, found {args.runs}")
    if args.minutes <= 0:
        problems.append(f"--minutes: expected more than 0, found {args.minutes}")
    bad = [f for f in args.formats.split(",") if f.strip() and f.strip() not in FORMATS]
    if bad:
        problems.append(f"--formats: expected some of {', '.join(FORMATS)}, found {', '.join(bad)}")
    if not 0 <= args.fault_rate <= 1:
        problems.append(f"--fault-rate: expected 0..1, found {args.fault_rate}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Run the campaign, each run one `chaos.run.execute` with its own emulator and proxy; print
    the campaign table and write `campaign.json` and every run's logs under `--out`."""
    args = _parser().parse_args(argv)
    if problems := validate(args):
        print("\n".join(problems), file=sys.stderr)
        return 2
    os.environ.update(TEST_CREDENTIALS)  # only ever the emulator's: never a real account's
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        os.environ.pop(name, None)
    started, load_before = time.monotonic(), machine_load()
    out = args.out / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    results: list[RunResult] = []
    for index in range(args.runs):
        left = args.minutes * 60 - (time.monotonic() - started)
        settings = settings_for(args, index, chaos_budget(left, args.runs - index))
        print(f"== run {index}: {settings.target_format} target, {settings.source_format} objects, "
              f"seed {settings.seed} ({machine_load()})", flush=True)
        results.append(execute(settings, out / f"run-{index}-{settings.target_format}",
                               lambda text: print(text, flush=True)))
        print(f"  run {index}: {'ok' if results[-1].ok else 'FAILED'}", flush=True)
    minutes = (time.monotonic() - started) / 60
    header = (f"== lakeinlet chaos campaign: seed {args.seed}, {args.runs} runs, {minutes:.1f} of "
              f"{args.minutes:g} minutes; fault rate {args.fault_rate:g}; machine: {load_before} at "
              f"the start, {machine_load()} at the end; results in {out}")
    print(render(results, header), flush=True)
    doc = {"args": {k: str(v) for k, v in vars(args).items()}, "runs": [r.to_json() for r in results]}
    (out / "campaign.json").write_text(json.dumps(doc, indent=1, default=str))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
