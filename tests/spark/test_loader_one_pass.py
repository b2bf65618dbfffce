"""One-pass batches (Parquet, every footer read, a target that checks between write and commit):
the write itself is checked, and a batch whose write shows a problem is read again and checked
object by object, its first write never committed."""

from __future__ import annotations

import logging
from typing import Any

import pyarrow.fs as pafs
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.read.reader import SparkReader
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parts,
    put,
    record,
    short_of_footers_read_again,
    target_rows,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.mark.parametrize("target_format", ["delta", "iceberg"])
def test_good_parquet_loads_in_one_pass(spark: Any, aws: AwsSection, reads: list[ReadBatch],
                                        target_format: str, caplog: pytest.LogCaptureFixture) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 3, 4)
    p = parts(make_config(aws, lake, target_format=target_format), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        p.loader().drain()
    assert [b.verify is not None for b in reads] == [True]  # not read ahead of the write
    assert not [r for r in caplog.records if r.getMessage() in ("reread", "file_index_fallback")]
    ledger = {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)}
    assert ledger == {f.key: ("loaded", 4) for f in files}
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in files for r in f.rows)


@pytest.mark.parametrize("schema", [SCHEMA_DDL, None])
def test_planning_from_file_statuses_falls_back_to_sparks_own(
        spark: Any, aws: AwsSection, monkeypatch: pytest.MonkeyPatch, reads: list[ReadBatch],
        caplog: pytest.LogCaptureFixture, schema: str | None) -> None:
    """When handing the statuses to Spark's file index fails (another Spark version, say), or
    there is no schema to plan with, the read is planned by Spark's own listing: the same rows
    load, still in one pass (the file statuses are taken from Spark's plan), with a warning when
    the statuses could not be handed over."""
    def broken(self: SparkReader, *args: Any) -> Any:
        raise RuntimeError("no such constructor")

    monkeypatch.setattr(SparkReader, "_indexed", broken)
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 2, 3)
    p = parts(make_config(aws, lake, schema=schema), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        assert p.loader().drain().statuses["loaded"] == 2
    assert [b.verify is not None for b in reads] == [True]
    warned = [r.levelno for r in caplog.records if r.getMessage() == "file_index_fallback"]
    assert warned == ([logging.WARNING] if schema else [])
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in files for r in f.rows)


@pytest.mark.parametrize("target_format", ["delta", "iceberg"])
def test_a_write_short_of_the_footers_is_read_again_and_checked_first(
        spark: Any, aws: AwsSection, reads: list[ReadBatch], target_format: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """A corrupt later row group: the one-pass write holds fewer rows than the footers; nothing
    of it is committed, the checked re-read quarantines that object and loads the other."""
    p, _ = short_of_footers_read_again(spark, aws, reads, caplog, target_format)
    if target_format == "delta":  # the first write's files were deleted, not left for vacuum
        written = p.target.fs.get_file_info(pafs.FileSelector(f"{p.target.root}/data", recursive=True))
        committed = {u.split("://", 1)[1] for u in p.target.table().file_uris()}
        stray = [i.path for i in written if i.path.endswith(".parquet") and i.path not in committed]
        assert stray == [], stray


@pytest.mark.parametrize("target_format", ["delta", "iceberg"])
def test_an_object_overwritten_after_its_footer_is_not_loaded(
        spark: Any, aws: AwsSection, monkeypatch: pytest.MonkeyPatch, reads: list[ReadBatch],
        target_format: str) -> None:
    """The footer's ranged GET saw one version (the plan's file statuses are that GET's); before
    Spark reads it, a bigger one with more rows is there. The one-pass write holds more rows than
    the footers promise, so nothing of it is committed: the checked read sets that object aside
    as overwritten (more rows than its footer; its newer version's event loads it) and loads the
    other."""
    landing, lake, s3 = new_lake(aws)
    old, new = make_files("parquet", 1, 3)[0], make_files("parquet", 1, 10, start=5)[0]
    good = make_files("parquet", 1, 4, start=50, prefix="good/")[0]
    original = SparkReader._footers

    def then_overwrite(self: SparkReader, *args: Any) -> Any:
        out = original(self, *args)
        s3.put_object(Bucket=landing, Key="x.parquet", Body=new.body)
        return out

    monkeypatch.setattr(SparkReader, "_footers", then_overwrite)
    p = parts(make_config(aws, lake, target_format=target_format), spark)
    record(p.changelog, [put(s3, landing, "x.parquet", old.body), put(s3, landing, good.key, good.body)])
    p.loader().drain()
    assert [b.verify is not None for b in reads] == [True, False]
    ledger = {r["key"]: (r["status"], r["rows"], r["reason"]) for r in ledger_rows(p)}
    status, rows, reason = ledger["x.parquet"]
    assert (status, rows) == ("filtered", 0) and "overwritten during the load" in reason, ledger
    assert ledger[good.key][:2] == ("loaded", 4)
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(r["order_id"] for r in good.rows)


def test_odd_keys_match_their_planned_files_and_load_in_one_pass(
        spark: Any, aws: AwsSection, reads: list[ReadBatch]) -> None:
    """The planned files are matched to the objects by path URI: spaces, percent signs, non-ASCII
    and glob characters in keys still find theirs (else the batch would take the checked read)."""
    landing, lake, s3 = new_lake(aws)
    keys = ["in/a b.parquet", "in/100%.parquet", "in/zürich.parquet", "in/report[1].parquet"]
    files = make_files("parquet", len(keys), 2)
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, k, f.body) for k, f in zip(keys, files, strict=True)])
    p.loader().drain()
    assert [b.verify is not None for b in reads] == [True]
    assert {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)} == {k: ("loaded", 2) for k in keys}
    rows = target_rows(p)
    assert sorted(zip(rows.column("_source_key").to_pylist(), rows.column("order_id").to_pylist(),
                      strict=True)) == sorted((k, r["order_id"]) for k, f in zip(keys, files, strict=True)
                                              for r in f.rows)
