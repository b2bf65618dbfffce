"""`lakeinlet-load maintain` beside a live loader, once per target format: many one-object batches,
then compactions while the loader keeps loading; every row once, the ledger exact, the
checkpoint chain unbroken and untouched by maintenance, few files left."""

from __future__ import annotations

import itertools
import json
import threading
import time
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.job import main
from lakeinlet.incremental.loader import Summary
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.targets.delta import maintain as dm
from lakeinlet.incremental.wiring import Parts
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parts,
    put,
    record,
    spark_rows,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]
FORMATS = ["delta", pytest.param("hudi", marks=pytest.mark.hudi), "iceberg"]
BEFORE, DURING = 6, 6
"""One-object batches loaded before maintenance starts, and while it runs."""
EXPECTED_FILES = 1
"""Live data files once a last `maintain` has run after the loads: a few KB of rows, no
partitions, a 128 MiB target."""
MAX_RUNS = 20


def flags(aws: AwsSection, lake: str, fmt: str) -> list[str]:
    return ["--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders", "--schema",
            SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or "", "--target-format", fmt]


def live_files(fresh: Parts) -> int:
    """The table's live data files, as its adapter counts them (a dry run changes nothing)."""
    return fresh.target.compact(fresh.config.tables.target_file_bytes, 168, dry_run=True).files_before


def maintain_while(loading: threading.Thread, argv: list[str]) -> list[int]:
    """`maintain` over and over while the loader runs; the exit codes."""
    codes = []
    while loading.is_alive() and len(codes) < MAX_RUNS:
        codes.append(main(["maintain", *argv]))
        time.sleep(0.5)
    return codes


@pytest.mark.parametrize("fmt", FORMATS)
def test_maintain_beside_a_live_loader_keeps_every_row_once(spark: Any, aws: AwsSection, fmt: str) -> None:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, target_format=fmt, max_files=1)
    p = parts(config, spark)
    files = make_files("parquet", BEFORE + DURING, 3)
    for f in files[:BEFORE]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])
    p.loader().drain()
    for f in files[BEFORE:]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])
    result: dict[str, Any] = {}
    loading = threading.Thread(target=lambda: result.update(summary=p.loader().drain()))
    loading.start()
    codes = maintain_while(loading, flags(aws, lake, fmt))
    loading.join(timeout=600)
    assert isinstance(result.get("summary"), Summary), "the loader thread failed (see its log)"
    assert result["summary"].batches == DURING  # none lost, none repeated, conflicts re-planned
    assert codes.count(0) >= 1 and set(codes) <= {0, 2}, codes  # 2: gave up after lost races

    fresh = parts(config, spark)
    checkpoint, batches = fresh.target.checkpoint().position, fresh.target.batches_after(-1)
    assert main(["maintain", *flags(aws, lake, fmt)]) == 0  # once more, with the loader stopped
    fresh = parts(config, spark)
    assert fresh.target.checkpoint().position == checkpoint == Position(BEFORE + DURING - 1)
    assert fresh.target.batches_after(-1) == batches
    assert live_files(fresh) <= EXPECTED_FILES

    order_ids = sorted(r["order_id"] for f in files for r in f.rows)
    assert sorted(target_rows(fresh).column("order_id").to_pylist()) == order_ids
    assert spark_rows(spark, fresh).count() == len(order_ids)
    ledger = ledger_rows(fresh)
    assert sorted((r["key"], r["status"], r["rows"]) for r in ledger) == sorted(
        (f.key, "loaded", 3) for f in files)
    assert {(r["target_version"], r["batch_id"]) for r in ledger} == {(v, b) for v, b, _ in batches}
    assert_chain(fresh, config.tables.app_id)
    if fmt == "delta":
        assert_no_data_change(s3, lake, fresh)


def assert_chain(fresh: Parts, app_id: str) -> None:
    """Each loader commit starts where the one before it ended: no batch skipped or repeated."""
    ours = sorted((c for c in fresh.target.commits() if c.is_ours(app_id)), key=lambda c: c.version)
    loads = [c.position for c in ours if c.operation == "load"]
    assert loads == [Position(v) for v in range(BEFORE + DURING)]
    assert all(b.start == a.position for a, b in itertools.pairwise(ours))


def assert_no_data_change(s3: Any, lake: str, fresh: Parts) -> None:
    """Every compaction commit is an OPTIMIZE whose files are added and removed with dataChange=false."""
    compactions = [c.version for c in fresh.target.commits() if c.operation == dm.COMPACT]
    assert compactions
    for version in compactions:
        body = s3.get_object(Bucket=lake, Key=f"orders/_delta_log/{version:020d}.json")["Body"].read()
        actions = [json.loads(line) for line in body.decode().splitlines()]
        files = [a.get("add") or a.get("remove") for a in actions if "add" in a or "remove" in a]
        assert files and {f["dataChange"] for f in files} == {False}, version
        assert [a["commitInfo"]["operation"] for a in actions if "commitInfo" in a] == ["OPTIMIZE"], version
