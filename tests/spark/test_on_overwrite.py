"""--on-overwrite: a new version of an object already loaded adds its rows beside the earlier
version's (`append`) or takes their place in the same commit (`replace`), on every format."""

from __future__ import annotations

import io
import os
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def parquet(*rows: tuple[int, str]) -> bytes:
    """A Parquet object of (order_id, customer) rows."""
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"order_id": i, "customer": c, "amount": 1.0,
                                          "ts": T0 + timedelta(minutes=i)} for i, c in rows]), sink)
    return sink.getvalue()


def lineage(table: pa.Table) -> Counter[tuple[str, int, str]]:
    return Counter(zip(table.column("_source_key").to_pylist(), table.column("order_id").to_pylist(),
                       table.column("customer").to_pylist(), strict=True))


@pytest.mark.parametrize("mode", ["append", "replace"])
def test_a_new_version_appends_or_replaces_the_rows_of_the_earlier_one(
        spark: Any, aws: AwsSection, target_format: str, mode: str) -> None:
    """Partitioned, so Hudi's keyless replace must give the new rows their partition paths; the
    new version moves a row to another partition."""
    landing, lake, s3 = new_lake(aws)
    cfg = make_config(aws, lake, target_format=target_format, on_overwrite=mode)
    p = parts(replace(cfg, tables=replace(cfg.tables, partition_by=("customer",))), spark)
    v1 = [put(s3, landing, "a.parquet", parquet((1, "x"))),
          put(s3, landing, "b.parquet", parquet((2, "x"), (3, "y")))]
    record(p.changelog, v1)
    p.loader().drain()
    before = p.target.checkpoint().target_version
    v2 = put(s3, landing, "a.parquet", parquet((4, "y"), (5, "z")))
    record(p.changelog, [v2])
    summary = p.loader().drain()
    old_a = {("a.parquet", 1, "x"): 1}
    kept = {("b.parquet", 2, "x"): 1, ("b.parquet", 3, "y"): 1}
    new_a = {("a.parquet", 4, "y"): 1, ("a.parquet", 5, "z"): 1}
    assert lineage(target_rows(p)) == (kept | new_a if mode == "replace" else old_a | kept | new_a)
    assert summary.batches == 1 and summary.replaced_rows == (1 if mode == "replace" else 0)
    loaded = [r for r in ledger_rows(p) if r["status"] == "loaded" and r["etag"] == v2.etag]
    assert [(r["rows"], "replaced 1 rows" in r["reason"]) for r in loaded] == [(2, mode == "replace")]
    if target_format == "delta":  # the deletion and the new rows are one table version
        assert p.target.checkpoint().target_version == before + 1

    v3 = put(s3, landing, "a.parquet", b"not parquet at all")  # set aside: replaces nothing
    record(p.changelog, [v3])
    p.loader().drain()
    assert lineage(target_rows(p)) == (kept | new_a if mode == "replace" else old_a | kept | new_a)
    assert [r["status"] for r in ledger_rows(p) if r["etag"] == v3.etag] == ["corrupt"]


def test_hudi_keyed_replace_deletes_only_keys_the_new_version_does_not_rewrite(
        spark: Any, aws: AwsSection) -> None:
    """A keyed Hudi table: the earlier version's row under a key the new version rewrites is
    updated by the upsert, one under a key it lacks is deleted; other objects keep theirs."""
    landing, lake, s3 = new_lake(aws)
    cfg = make_config(aws, lake, target_format="hudi", on_overwrite="replace")
    p = parts(replace(cfg, hudi=HudiSection(hudi_record_key="order_id")), spark)
    record(p.changelog, [put(s3, landing, "a.parquet", parquet((1, "x"), (2, "x"))),
                         put(s3, landing, "b.parquet", parquet((3, "x")))])
    p.loader().drain()
    record(p.changelog, [put(s3, landing, "a.parquet", parquet((1, "new"), (9, "x")))])
    summary = p.loader().drain()
    assert lineage(target_rows(p)) == {("a.parquet", 1, "new"): 1, ("a.parquet", 9, "x"): 1,
                                       ("b.parquet", 3, "x"): 1}
    assert summary.replaced_rows == 2


@pytest.mark.parametrize("how", ["replace", "remove-rows"])
def test_a_delta_table_at_a_relative_local_path_loses_the_rows_it_should(
        spark: Any, aws: AwsSection, tmp_path: Path, how: str) -> None:
    """The README runs its loader on `./lake/orders`: the files holding rows to delete are found
    there too (Spark names them file:/<absolute path>), not rewritten beside the originals. (The
    path is relative to the working folder, which the test's JVM cannot change.)"""
    landing, lake, s3 = new_lake(aws)
    table = os.path.relpath(tmp_path / "orders")
    cfg = make_config(aws, lake, table=table, on_overwrite="replace", on_delete=how.replace(
        "replace", "append-only"))
    p = parts(cfg, spark)
    record(p.changelog, [put(s3, landing, "a.parquet", parquet((1, "x"), (2, "y"))),
                         put(s3, landing, "b.parquet", parquet((3, "x")))])
    p.loader().drain()
    if how == "replace":
        record(p.changelog, [put(s3, landing, "a.parquet", parquet((4, "z")))])
    else:
        s3.delete_object(Bucket=landing, Key="a.parquet")
        record(p.changelog, [ObjectEvent(landing, "a.parquet", "ObjectRemoved:Delete", datetime.now(UTC))])
    p.loader().drain()
    expected = {("b.parquet", 3, "x"): 1} | ({("a.parquet", 4, "z"): 1} if how == "replace" else {})
    assert lineage(target_rows(p)) == expected
