"""Where a loader batch's time goes beside the hand-written baseline of loader_throughput.py: the
loader's steps (HEADs, footers, read planning, write, commit, ledger) and every Spark stage of each
side with its tasks and times (from Spark's status store), in one run on moto over s3a."""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, cast

from loader_common import bucket, loader_config, put_many, record, stack, timed
from loader_throughput import Width, plain_write, warm_up, widths

from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.wiring import build

STEPS = {  # class (or module) → its methods (functions) whose calls are timed
    "lakeinlet.incremental.objects.S3ObjectStore": ("head_many", "footers"),
    "lakeinlet.incremental.read.reader.SparkReader": ("read", "_load", "_with_lineage"),
    "lakeinlet.incremental.targets.delta.target.DeltaTarget": (
        "stage", "publish", "_write", "_ensure", "_commit", "_check_files", "table", "checkpoint"),
    "lakeinlet.incremental.targets.delta.target": ("data_files",),
    "lakeinlet.incremental.targets.iceberg.target.IcebergTarget": (
        "stage", "publish", "_base", "_append_to_branch", "_fast_forward", "_branch", "commits", "table"),
    "lakeinlet.incremental.targets.iceberg.outcome_files.OutcomeFiles": ("put",),
    "lakeinlet.incremental.ledger.DeltaLedger": ("append", "known", "last_target_version"),
    "lakeinlet.incremental.loader.Loader": ("plan", "_check", "_record", "_catch_up"),
}


@contextlib.contextmanager
def step_timer(spent: dict[str, list[float]]) -> Iterator[None]:
    """Wraps the STEPS' methods so each call adds its seconds to `spent[Class.method]`."""
    import importlib

    undo: list[Callable[[], None]] = []
    for dotted, methods in STEPS.items():
        module, _, name = dotted.rpartition(".")
        try:
            owner = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        for method in methods:
            original = owner.__dict__.get(method)
            if original is None:
                continue

            def wrapper(*a: Any, _f: Any = original, _k: str = f"{name}.{method}", **kw: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return _f(*a, **kw)
                finally:
                    spent[_k].append(time.perf_counter() - t0)

            setattr(owner, method, wrapper)
            undo.append(partial(setattr, owner, method, original))
    try:
        yield
    finally:
        for u in undo:
            u()


SPREAD_MB = 0


@contextlib.contextmanager
def spread(on: bool) -> Iterator[None]:
    """An experiment: a batch of at least 2 x SPREAD_MB of source data is written by as many
    tasks as Spark has cores (files of at least SPREAD_MB), not one."""
    if not on:
        yield
        return
    from unittest.mock import patch

    from lakeinlet.incremental.targets import sizing
    from lakeinlet.incremental.targets.delta import target as delta
    from lakeinlet.incremental.targets.iceberg import target as iceberg

    def wider(df: Any, size: int, file_bytes: int, partition_by: Any) -> Any:
        cores = df.sparkSession.sparkContext.defaultParallelism
        n = max(sizing.files_for(size, file_bytes), min(cores, size // (SPREAD_MB * 1024 * 1024)))
        return df.repartition(n, *partition_by) if partition_by else df.coalesce(n)

    with patch.object(delta, "sized", wider), patch.object(iceberg, "sized", wider):
        yield


def stages_after(spark: Any, last: int) -> tuple[list[dict[str, Any]], int]:
    """Spark's stages with an id above `last` (completed or not), oldest first, and the top id."""
    jvm = lakejvm.of(spark)
    store = lakejvm.session(spark).sparkContext().statusStore()
    found = []  # stageList's Scala default arguments, spelled out for py4j
    no_quantiles = jvm.java.lang.reflect.Array.newInstance(jvm.java.lang.Double.TYPE, 0)
    it = store.stageList(None, False, False, no_quantiles, jvm.java.util.ArrayList()).iterator()
    while it.hasNext():
        s = it.next()
        if s.stageId() <= last:
            continue
        sub, done = s.submissionTime(), s.completionTime()
        both = sub.isDefined() and done.isDefined()
        wall = (done.get().getTime() - sub.get().getTime()) / 1000 if both else 0
        found.append({"id": s.stageId(), "name": s.name()[:60], "tasks": s.numTasks(), "wall": wall,
                      "run": s.executorRunTime() / 1000, "cpu": s.executorCpuTime() / 1e9,
                      "in_mb": s.inputBytes() / 1e6, "out_mb": s.outputBytes() / 1e6})
    found.sort(key=lambda d: d["id"])
    return found, max([last, *(d["id"] for d in found)])


def show(side: str, seconds: float, stages: list[dict[str, Any]], spent: dict[str, list[float]]) -> None:
    print(f"  {side}: {seconds:.2f} s; Spark stages {sum(d['wall'] for d in stages):.2f} s wall")
    for d in stages:
        print(f"    stage {d['id']:>4} {d['tasks']:>4} tasks {d['wall']:>6.2f} s wall, "
              f"{d['run']:>6.2f} s run, "
              f"{d['cpu']:>6.2f} s cpu, in {d['in_mb']:>6.1f} MB out {d['out_mb']:>6.1f} MB  {d['name']}")
    for k, v in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {k:<40} {sum(v):>6.2f} s in {len(v)} calls")


def round_of(spark: Any, aws: Any, fmt: str, width: Width, uri: str, loader_first: bool,
             last: int) -> int:
    landing, lake = bucket(aws, "land"), bucket(aws, "lake")
    events = put_many(aws, landing, [(f.key, f.body) for f in [width.seed, *width.files]])
    paths = [f"s3a://{landing}/{f.key}" for f in width.files]
    parts = build(loader_config(aws, lake, "orders", target=fmt, iceberg_uri=uri, schema=width.ddl,
                                max_files=10_000), spark)
    if fmt == "iceberg":
        cast(Any, parts.target).session()
    plain_write(spark, fmt, [f"s3a://{landing}/{width.seed.key}"], lake, "metadata", width.ddl)
    record(parts.changelog, events[:1])
    parts.loader().drain()
    _, last = stages_after(spark, last)
    order = ["loader", "baseline"] if loader_first else ["baseline", "loader"]
    if SPREAD_MB:
        order = ["spread", *order] if loader_first else [*order, "spread"]
    print(f"{fmt} {width.name}, {order[0]} first; load average {os.getloadavg()[0]:.2f}")
    for side in order:
        spent: dict[str, list[float]] = defaultdict(list)
        if side == "baseline":
            s = plain_write(spark, fmt, paths, lake, "metadata", width.ddl)
        else:
            side_parts = parts
            if side == "spread":  # a table (and changelog) of its own
                other = bucket(aws, "lake")
                side_parts = build(loader_config(aws, other, "orders", target=fmt, iceberg_uri=uri,
                                                 schema=width.ddl, max_files=10_000), spark)
                if fmt == "iceberg":
                    cast(Any, side_parts.target).session()
                record(side_parts.changelog, events[:1])
                side_parts.loader().drain()
                _, last = stages_after(spark, last)
            record(side_parts.changelog, events[1:])
            with step_timer(spent), spread(side == "spread"):
                s, _ = timed(side_parts.loader().drain)
        found, last = stages_after(spark, last)
        show(side, s, found, spent)
    return last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--formats", default="delta,iceberg")
    ap.add_argument("--width", default="wide", choices=["narrow", "wide"])
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--rows", type=int, default=0, help="rows per object (default: the width's)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--spread-mb", type=int, default=0, help="also a loader side spread over the cores")
    args = ap.parse_args()
    global SPREAD_MB
    SPREAD_MB = args.spread_mb
    (width,) = widths([args.width], args.files, args.rows or 20000, args.rows or 5000)
    with stack(every=True) as (_, aws, spark), tempfile.TemporaryDirectory() as tmp:
        uri = f"jdbc:sqlite:{tmp}/catalog.db"
        last = -1
        for fmt in args.formats.split(","):
            warm_up(spark, aws, fmt, uri)
            for i in range(args.rounds):
                last = round_of(spark, aws, fmt, width, uri, i % 2 == 1, last)


if __name__ == "__main__":
    main()
