"""Crash at every named step of a batch, then rerun: the target holds each row exactly once."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.samples import make_files
from lakeinlet.incremental.targets.delta.files import list_written
from lakeinlet.storage import filesystem
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, record, target_rows, upload
from tests.targets import CRASH_POINTS, Crash, crashing

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _all_files(aws: AwsSection, lake: str) -> list[str]:
    fs, root = filesystem(f"s3://{lake}/orders", aws)
    return [rel for rel, _, _ in list_written(fs, root, "data")]


@pytest.mark.parametrize("step", CRASH_POINTS)
def test_crash_then_rerun_is_exactly_once(spark: Any, aws: AwsSection, step: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 5, 3)
    events = upload(s3, landing, files)
    p = parts(make_config(aws, lake, max_files=2), spark)
    record(p.changelog, events[:3])
    record(p.changelog, events[3:] + events[:1])
    p.loader().run_batch()  # one clean batch first, so the crash hits a table with history
    with pytest.raises(Crash):
        crashing(p.loader(), step).run_batch()
    summary = p.loader().drain()
    table = target_rows(p)
    assert Counter(table.column("order_id").to_pylist()) == Counter(
        r["order_id"] for f in files for r in f.rows)
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}
    committed = {u.split("/orders/", 1)[1] for u in p.target.table().file_uris()}  # type: ignore[union-attr]
    orphans = set(_all_files(aws, lake)) - committed
    assert bool(orphans) == (step == "written")  # Spark wrote files, no commit referenced them
    # batch 1 loaded 2 objects; the crashed batch held 1 new object + 1 duplicate notification
    assert summary.statuses["loaded"] == (3 if step in ("planned", "read", "written") else 2)


class RacingTarget:
    """Delegates to the real target; both loaders meet at a barrier right before publishing."""

    def __init__(self, inner: Any, barrier: threading.Barrier) -> None:
        self.inner, self.barrier, self.waited = inner, barrier, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def publish(self, staged: Any) -> int:
        if not self.waited:
            self.waited = True
            self.barrier.wait(timeout=180)
        return int(self.inner.publish(staged))


def test_two_loaders_at_once_commit_each_batch_once(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 6, 2)
    config = make_config(aws, lake, max_files=3)
    first = parts(config, spark)
    record(first.changelog, upload(s3, landing, files))
    barrier = threading.Barrier(2)
    loaders = []
    for _ in range(2):
        p = parts(config, spark)
        loader = p.loader()
        loader.target = RacingTarget(p.target, barrier)
        loaders.append(loader)
    results: list[Any] = [None, None]

    def go(i: int) -> None:
        try:
            results[i] = loaders[i].drain()
        except Exception as exc:  # a clean failure is allowed; it must not have committed
            results[i] = exc

    threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    summaries = [r for r in results if not isinstance(r, Exception)]
    assert summaries, results
    assert sum(s.conflicts for s in summaries) >= 1
    assert sum(s.batches for s in summaries) == 2
    table = target_rows(first)
    assert Counter(table.column("order_id").to_pylist()) == Counter(
        r["order_id"] for f in files for r in f.rows)
    assert Counter(r["key"] for r in ledger_rows(first)) == {f.key: 1 for f in files}
    assert client("s3", aws).list_objects_v2(Bucket=lake, Prefix="orders/_delta_log/")["KeyCount"] > 0
