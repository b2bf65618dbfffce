"""Hudi's one-pass write: a Parquet batch goes to Hudi's writer as it is read, and is checked inside
Hudi's commit, before its instant completes. A batch whose check fails is never committed (its
instant is rolled back, the batch read again and checked object by object); a lost lease found
there leaves an inflight instant that the next writer rolls back, and every row loads once."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlparse

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.targets.hudi.lease import LeaseLost
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

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.hudi]


def timeline(s3: Any, target: Any) -> list[str]:
    """The names in the table's `.hoodie/timeline` (instants and their states)."""
    uri = urlparse(target.uri)
    prefix = f"{uri.path.strip('/')}/.hoodie/timeline/"
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=uri.netloc, Prefix=prefix)
    return [o["Key"][len(prefix):] for page in pages for o in page.get("Contents", [])
            if "/" not in o["Key"][len(prefix):]]


def pending(names: list[str]) -> set[str]:
    """Instants requested or inflight and not completed (a completed one is `<start>_<end>.<action>`)."""
    done = {n.split("_", 1)[0] for n in names if "_" in n.split(".", 1)[0]}
    return {n.split(".", 1)[0] for n in names if n.endswith((".inflight", ".requested"))} - done


def test_a_good_parquet_batch_is_written_and_committed_in_one_pass(
        spark: Any, aws: AwsSection, reads: list[ReadBatch], caplog: pytest.LogCaptureFixture) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 3, 4)
    p = parts(make_config(aws, lake, target_format="hudi"), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        report = p.loader().run_batch()
    assert report is not None and [b.verify is not None for b in reads] == [True]
    assert not [r for r in caplog.records if r.getMessage() in ("reread", "hudi_one_pass_fallback")]
    ledger = {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)}
    assert ledger == {f.key: ("loaded", 4) for f in files}
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in files for r in f.rows)
    head = p.target.commits(1)[0]
    assert (head.version, head.meta["batch"]) == (report.target_version, report.batch_id)
    names = timeline(s3, p.target)
    assert not pending(names) and not [n for n in names if "rollback" in n], names


def test_a_write_short_of_the_footers_is_never_committed(
        spark: Any, aws: AwsSection, reads: list[ReadBatch], caplog: pytest.LogCaptureFixture) -> None:
    """A corrupt later row group: the rows written fall short of the footers, so the check refuses
    the commit; its instant is rolled back, and the checked re-read quarantines that object and
    loads the other. Fails if the check lets a bad batch through."""
    p, s3 = short_of_footers_read_again(spark, aws, reads, caplog, "hudi")
    loads = [c.meta["batch"] for c in p.target.commits() if c.meta.get("operation") == "load"]
    assert len(loads) == 1 and loads[0].endswith("-checked"), loads
    names = timeline(s3, p.target)
    assert not pending(names) and [n for n in names if n.endswith(".rollback")], names


def test_a_lease_lost_before_the_instant_completes_commits_nothing(
        spark: Any, aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lease is checked inside Hudi's commit: lost there, the written rows stay an inflight
    instant no reader sees; the next run's writer rolls it back and loads every row once."""
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 2, 3)
    p = parts(make_config(aws, lake, target_format="hudi"), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])

    def lost() -> None:
        raise LeaseLost("taken over")

    monkeypatch.setattr(p.target.lease, "check", lost)
    with pytest.raises(LeaseLost):
        p.loader().drain()
    assert p.target.commits() == [] and ledger_rows(p) == []
    assert pending(timeline(s3, p.target)), "the written rows should be an inflight instant"
    monkeypatch.undo()
    assert p.loader().drain().statuses["loaded"] == 2
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in files for r in f.rows)
    assert not pending(timeline(s3, p.target))
