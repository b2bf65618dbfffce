"""Hudi's compaction (`maintain`): small base files clustered under the writer lease, with the
rows (Hudi's meta columns included), the loader's checkpoint, history and next batch unchanged."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import Any, cast

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_rows
from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.targets.hudi import maintain
from lakeinlet.incremental.targets.hudi.lease import LeaseHeld
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.hudi.target import HudiTarget
from lakeinlet.incremental.targets.hudi.write_options import META_COLUMNS
from lakeinlet.incremental.wiring import Parts
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parquet_bytes,
    parts,
    put,
    record,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.hudi]
TARGET = 128 << 20
BATCHES = 6


def loaded(spark: Any, aws: AwsSection, batches: int = BATCHES, **hudi: Any) -> tuple[Parts, Any, str]:
    """A Hudi table partitioned by `customer` ("a", "b") loaded by `batches` one-object batches:
    at least one small file per partition per batch."""
    landing, lake, s3 = new_lake(aws)
    cfg = make_config(aws, lake, target_format="hudi", max_files=1)
    cfg = replace(cfg, tables=replace(cfg.tables, partition_by=("customer",)), hudi=HudiSection(**hudi))
    p = parts(cfg, spark)
    for n in range(batches):
        add(p, s3, landing, n)
    p.loader().drain()
    return p, s3, landing


def add(p: Parts, s3: Any, landing: str, n: int) -> None:
    rows = [r | {"customer": "ab"[i % 2]} for i, r in enumerate(make_rows(n, 4))]
    record(p.changelog, [put(s3, landing, f"in/{n:03d}.parquet", parquet_bytes(rows))])


def hudi(p: Parts) -> HudiTarget:
    return cast(HudiTarget, p.target)


def with_meta(p: Parts) -> Counter[tuple[Any, ...]]:
    """Every row with Hudi's meta columns except the file name (clustering moves rows), counted."""
    table = pa.Table.from_batches(hudi(p).table().read())
    cols = [c for c in META_COLUMNS if c != "_hoodie_file_name"] + ["order_id", "customer", "_source_key"]
    return Counter(zip(*(table.column(c).to_pylist() for c in cols), strict=True))


def history(p: Parts) -> tuple[Any, ...]:
    return (p.target.checkpoint(), p.target.commits(), p.target.batches_after(-1))


def replacecommits(p: Parts) -> list[str]:
    timeline = hudi(p).table().get_timeline()
    return [i.timestamp for i in timeline.get_completed_replacecommits()]


def test_clustering_leaves_fewer_files_and_rows_checkpoint_history_unchanged(
        spark: Any, aws: AwsSection, capsys: Any) -> None:
    p, s3, landing = loaded(spark, aws)
    rows, past = with_meta(p), history(p)
    assert len(rows) == 4 * BATCHES and set(rows.values()) == {1}
    dry = p.target.compact(TARGET, 168, dry_run=True)
    assert (dry.rewritten, dry.files_after, dry.version) == (dry.files_before, 2, None)
    assert maintain.layout(hudi(p).table()).files and not replacecommits(p)
    done = p.target.compact(TARGET, 168, dry_run=False)
    with capsys.disabled():
        print(f"\nhudi maintain: {done.files_before} files ({done.bytes_before} bytes) -> "
              f"{done.files_after} files ({done.bytes_after} bytes); {done.detail}")
    assert (done.files_before, done.rewritten, done.files_after) == (dry.files_before, dry.files_before, 2)
    assert done.version is not None and replacecommits(p) == [str(done.version)]
    assert with_meta(p) == rows  # same rows, same keys and commit times, none twice
    assert history(p) == past  # the replacecommit is no loader commit: checkpoint and ledger repair
    again = p.target.compact(TARGET, 168, dry_run=False)
    assert (again.rewritten, again.version, again.files_after) == (0, None, 2)
    add(p, s3, landing, BATCHES)
    p.loader().drain()
    ids = sorted(target_rows(p).column("order_id").to_pylist())
    assert ids == sorted(r["order_id"] for n in range(BATCHES + 1) for r in make_rows(n, 4))
    assert Counter(r["key"] for r in ledger_rows(p)) == {f"in/{n:03d}.parquet": 1 for n in range(BATCHES + 1)}
    assert p.target.checkpoint().target_version > past[0].target_version


def test_a_clustering_an_interrupted_maintain_left_pending_is_finished_first(
        spark: Any, aws: AwsSection) -> None:
    """A pending plan blocks upserts into its files (Hudi rejects them): the next maintain runs it."""
    p, _, _ = loaded(spark, aws, batches=3)
    rows = with_meta(p)
    opts = maintain.options(hudi(p).options("insert"),
                            maintain.plan(maintain.layout(hudi(p).table()), TARGET))
    assert maintain._call(spark, hudi(p).spark_uri, opts, "schedule") == []
    done = p.target.compact(TARGET, 168, dry_run=False)
    assert "finished 1 pending clustering plans" in done.detail
    shown = spark.sql(f"CALL show_clustering(path => '{hudi(p).spark_uri}')").collect()
    states = {r["state"] for r in shown}
    assert states == {"COMPLETED"} and done.files_after == 2
    assert with_meta(p) == rows


def test_maintain_gives_up_when_a_loader_keeps_the_lease(spark: Any, aws: AwsSection) -> None:
    p, _, _ = loaded(spark, aws, batches=2, lease_wait_seconds=1)
    loader = parts(p.config, spark)  # another process's loader: its own lease holder
    files = maintain.layout(hudi(p).table()).files
    with hudi(loader).writing(), pytest.raises(LeaseHeld, match=r"maintain gave up: a loader \(.+\) holds"):
        p.target.compact(TARGET, 168, dry_run=False)
    assert maintain.layout(hudi(p).table()).files == files


def test_maintain_waits_for_a_loaders_lease_then_clusters_what_the_loader_committed_meanwhile(
        spark: Any, aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    p, s3, landing = loaded(spark, aws, batches=2)
    loader = parts(p.config, spark)
    asked, done = threading.Event(), dict[str, Compaction]()
    acquire = hudi(p).lease.acquire

    def asking(wait: float, role: str = "a loader") -> None:
        asked.set()
        acquire(wait, role)

    monkeypatch.setattr(hudi(p).lease, "acquire", asking)
    with hudi(loader).writing():
        waiting = threading.Thread(target=lambda: done.update(c=p.target.compact(TARGET, 168, dry_run=False)))
        waiting.start()
        assert asked.wait(60)
        add(loader, s3, landing, 2)
        loader.loader().drain()  # a batch committed while maintain waits (2 more files)
    waiting.join(timeout=300)
    assert (done["c"].files_before, done["c"].rewritten, done["c"].files_after) == (6, 6, 2)
    assert Counter(r["key"] for r in ledger_rows(p)) == {f"in/{n:03d}.parquet": 1 for n in range(3)}


def test_maintain_inside_a_run_that_holds_the_lease_keeps_holding_it(spark: Any, aws: AwsSection) -> None:
    """A --continuous loader's maintenance runs under the loader's own lease, and leaves it held."""
    p, _, _ = loaded(spark, aws, batches=2, lease_wait_seconds=1)
    with hudi(p).writing():
        assert p.target.compact(TARGET, 168, dry_run=False).files_after == 2
        hudi(p).lease.check()
    with pytest.raises(Exception, match=r"not held|taken over"):
        hudi(p).lease.check()


def test_clustering_waits_while_hudi_could_archive_the_checkpoint_commit(
        spark: Any, aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replacecommits count toward Hudi's archiving: none is added once the loader's checkpoint
    commit has `KEEP_ACTIVE` newer instants."""
    p, _, _ = loaded(spark, aws, batches=2)
    frame = spark.read.format("hudi").load(hudi(p).spark_uri).limit(1).drop(*META_COLUMNS)
    frame.write.format("hudi").options(**hudi(p).options("insert")).mode("append").save(
        hudi(p).spark_uri)  # a commit of another writer, no checkpoint
    monkeypatch.setattr(maintain, "KEEP_ACTIVE", 1)
    done = p.target.compact(TARGET, 168, dry_run=False)
    assert "skipped: 1 Hudi commits since the loader's checkpoint commit" in done.detail
    assert (done.version, done.rewritten, replacecommits(p)) == (None, 0, [])
