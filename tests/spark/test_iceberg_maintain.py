"""Iceberg's `compact`: small files rewritten into one per partition and snapshots expired, with every
row, the checkpoint and ledger repair unchanged; a loader's publish racing the rewrite re-plans."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet import jars
from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SampleFile, make_files
from lakeinlet.errors import CommitConflict
from lakeinlet.incremental.wiring import Parts
from tests.conftest import unique
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, record, target_rows, upload
from tests.targets import Crash, crashing

pytestmark = [pytest.mark.spark, pytest.mark.integration,
              pytest.mark.skipif(jars.installed_line() != "3.5", reason="the 4.1 line runs Iceberg's "
                                 "maintain beside a live loader (test_maintain.py); these races once")]
FILE_BYTES = 128 * 1024 * 1024


def files_per_partition(p: Parts) -> Counter[Any]:
    return Counter(tuple(t.file.partition) for t in p.target.table().scan().plan_files())


def snapshot_ids(p: Parts) -> set[int]:
    return {s.snapshot_id for s in p.target.table().snapshots()}


def sorted_rows(p: Parts) -> pa.Table:
    return target_rows(p).sort_by("order_id")


def loaded_refs(p: Parts) -> Counter[tuple[str, str]]:
    return Counter((r["bucket"], r["key"]) for r in ledger_rows(p) if r["status"] == "loaded")


def order_ids(files: list[SampleFile]) -> list[int]:
    return sorted(r["order_id"] for f in files for r in f.rows)


def test_compaction_keeps_rows_checkpoint_and_ledger_repair(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    other = unique("land")
    s3.create_bucket(Bucket=other)
    config = make_config(aws, lake, target_format="iceberg", max_files=2)
    p = parts(dataclasses.replace(config, tables=dataclasses.replace(
        config.tables, partition_by=("_source_bucket",))), spark)
    files = make_files("parquet", 8, 3)
    events = [e for pair in zip(upload(s3, landing, files[0::2]), upload(s3, other, files[1::2]),
                                strict=True) for e in pair]  # each batch of two holds both partitions
    record(p.changelog, events[:6])
    p.loader().drain()
    record(p.changelog, events[6:])
    with pytest.raises(Crash):  # the last batch is committed, its ledger rows are not
        crashing(p.loader(), "committed").run_batch()
    p.target.release()  # the crashed run's staging branch, which holds its commit, is gone (vacuum)
    rows, checkpoint, before = sorted_rows(p), p.target.checkpoint().position, files_per_partition(p)
    assert len(before) == 2 and min(before.values()) >= 3

    snapshots = snapshot_ids(p)
    dry = p.target.compact(FILE_BYTES, 0, dry_run=True)
    total = sum(before.values())
    assert (dry.files_before, dry.rewritten, dry.files_after, dry.version) == (total, total, 2, None)
    assert snapshot_ids(p) == snapshots and "would expire" in dry.detail

    done = p.target.compact(FILE_BYTES, 0, dry_run=False)
    assert (done.files_before, done.rewritten, done.files_after) == (total, total, 2)
    assert done.version is not None and done.bytes_after > 0
    assert sorted(files_per_partition(p).values()) == [1, 1]
    assert sorted_rows(p).equals(rows)
    assert p.target.checkpoint().position == checkpoint
    expired = snapshots - snapshot_ids(p)
    assert expired and f"expired {len(expired)} snapshots" in done.detail
    assert f"the rewrite replaced {total} files with 2; meanwhile 0 loader commits added 0 files" \
        in done.detail

    assert p.loader().repair() == 1  # the crashed batch's commit survived the expiry
    assert loaded_refs(p) == {(e.bucket, e.key): 1 for e in events}


class PublishAround:
    """The loader's target with `before` run right before its first publish."""

    def __init__(self, inner: Any, before: Callable[[], Any]) -> None:
        self.inner, self.before, self.results = inner, before, list[Any]()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def publish(self, staged: Any) -> int:
        if not self.results:
            self.results.append(self.before())
        return int(self.inner.publish(staged))


def loaded_twice(spark: Any, aws: AwsSection) -> tuple[Parts, Any, list[SampleFile]]:
    """A table of two small files (two batches), and two more objects in the changelog."""
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake, target_format="iceberg", max_files=2), spark)
    files = make_files("parquet", 6, 2)
    record(p.changelog, upload(s3, landing, files[:4]))
    assert p.loader().drain().batches == 2
    record(p.changelog, upload(s3, landing, files[4:]))
    return p, landing, files


def test_a_publish_after_a_rewrite_conflicts_then_loads_once(spark: Any, aws: AwsSection) -> None:
    p, _, files = loaded_twice(spark, aws)
    loader = p.loader()
    racing = PublishAround(loader.target, lambda: p.target.compact(FILE_BYTES, 0, dry_run=False))
    with pytest.raises(CommitConflict, match="lost to a concurrent writer"):
        dataclasses.replace(loader, target=racing).run_batch()
    assert racing.results[0].version is not None  # the rewrite committed between stage and publish
    summary = p.loader().drain()
    assert (summary.batches, summary.rows) == (1, 4)
    assert sorted(target_rows(p).column("order_id").to_pylist()) == order_ids(files)
    assert set(loaded_refs(p).values()) == {1} and len(loaded_refs(p)) == 6


class SqlAround:
    """A SparkSession whose `sql` calls `after` once a statement containing `word` has run."""

    def __init__(self, inner: Any, word: str, after: Callable[[], None]) -> None:
        self.inner, self.word, self.after = inner, word, after

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def sql(self, text: str) -> Any:
        found = self.inner.sql(text)
        if self.word in text:
            rows = found.collect()  # a CALL runs when its frame is collected, or before
            self.after()
            return Rows(rows)
        return found


@dataclasses.dataclass
class Rows:
    rows: list[Any]

    def collect(self) -> list[Any]:
        return self.rows


def test_a_rewrite_right_after_a_publish_leaves_its_version(spark: Any, aws: AwsSection,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    p, _, files = loaded_twice(spark, aws)
    target, session = p.target, p.target.session
    rewrites: list[Any] = []

    def rewrite_once() -> None:
        if not rewrites:
            rewrites.append(target.compact(FILE_BYTES, 0, dry_run=False))

    monkeypatch.setattr(target, "session", lambda: SqlAround(session(), "fast_forward", rewrite_once))
    summary = p.loader().drain()
    assert summary.batches == 1 and rewrites[0].version is not None
    version = max(r["target_version"] for r in ledger_rows(p))
    assert version < rewrites[0].version  # the ledger holds the batch's commit, below the rewrite
    assert target.batches_after(version) == []
    assert sorted(target_rows(p).column("order_id").to_pylist()) == order_ids(files)
