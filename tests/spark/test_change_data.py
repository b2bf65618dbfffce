"""Change data as AWS DMS writes it to S3 (a full load, then CDC files whose rows carry `Op` I/U/D
and a commit timestamp), merged by key into every format: after each load the table equals the
source table's state, read back by another engine; a crash at every step of a MERGE batch, then
a rerun, leaves the same table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.errors import TerminalError
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.merge_settings import MergeSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows
from tests.targets import CRASH_POINTS, Crash, crashing

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SCHEMA = "Op STRING, ts TIMESTAMP, id INT, name STRING, amount DOUBLE"
T0 = datetime(2026, 11, 28, 10, 0, 0)
Change = tuple[str, int, int, str, float]
"""(Op, seconds after T0, id, name, amount): one row of a DMS file."""


def dms_csv(rows: Sequence[Change]) -> bytes:
    """A DMS CSV file with `addColumnName=true`, `includeOpForFullLoad=true` and a
    `TimestampColumnName` of `ts` (microseconds, as DMS writes it)."""
    lines = ["Op,ts,id,name,amount"]
    for op, sec, key, name, amount in rows:
        ts = (T0 + timedelta(seconds=sec)).strftime("%Y-%m-%d %H:%M:%S.%f")
        lines.append(f"{op},{ts},{key},{name},{amount}")
    return ("\n".join(lines) + "\n").encode()


FULL_LOAD: list[Change] = [("I", 0, i, f"n{i}", float(i)) for i in range(1, 7)]
CDC: list[list[Change]] = [
    [("U", 20, 1, "n1b", 10.0), ("D", 30, 2, "", 0.0), ("I", 40, 7, "n7", 7.0),
     ("U", 50, 3, "n3b", 30.0), ("D", 60, 3, "", 0.0),  # a key updated, then deleted, in one file
     ("U", 80, 4, "n4c", 41.0)],
    [("U", 70, 4, "n4b", 40.0),  # older than the update the last file held: skipped
     ("U", 110, 8, "n8b", 81.0), ("I", 100, 8, "n8", 80.0),  # out of order within the file
     ("U", 90, 1, "n1c", 11.0), ("D", 95, 6, "", 0.0)],
    [("U", 85, 1, "n1-late", 12.0),  # a late file: older than the row's change at 90, skipped
     ("D", 15, 7, "", 0.0),  # a delete older than the row (inserted at 40): skipped too
     ("U", 120, 5, "n5b", 50.0), ("I", 130, 2, "n2-again", 2.0)],  # a deleted key inserted again
]


def source_state(files: Sequence[Sequence[Change]]) -> list[tuple[int, str, float]]:
    """The source table after every change of `files`, applied in commit-timestamp order."""
    rows: dict[int, tuple[str, float]] = {}
    for op, _sec, key, name, amount in sorted((c for f in files for c in f), key=lambda c: c[1]):
        if op == "D":
            rows.pop(key, None)
        else:
            rows[key] = (name, amount)
    return sorted((k, *v) for k, v in rows.items())


def merge_config(aws: AwsSection, lake: str, target_format: str, **plan: Any) -> Any:
    config = make_config(aws, lake, fmt="csv", schema=SCHEMA, target_format=target_format, **plan)
    return replace(config, merge=MergeSection(merge_key=("id",), order_by="ts", delete_when="Op = 'D'"))


def table_state(p: Any) -> list[tuple[int, str, float]]:
    table = target_rows(p)
    return sorted((r["id"], r["name"], r["amount"])
                  for r in table.select(["id", "name", "amount"]).to_pylist())


def test_dms_full_load_then_cdc_files_leave_the_source_state_after_every_load(
        spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(merge_config(aws, lake, target_format), spark)
    files = [FULL_LOAD, *CDC]
    names = ["dms/sales/orders/LOAD00000001.csv", *(f"dms/sales/orders/20261128-10{i:02d}00000.csv"
                                                    for i in range(len(CDC)))]
    for n, (name, rows) in enumerate(zip(names, files, strict=True), 1):
        record(p.changelog, [put(s3, landing, name, dms_csv(rows))])
        p.loader().drain()
        assert table_state(p) == source_state(files[:n]), name
    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert {k: (r["status"], r["rows"]) for k, r in ledger.items()} == {
        name: ("loaded", len(rows)) for name, rows in zip(names, files, strict=True)}
    assert "Op" in target_rows(p).schema.names and "_lakeinlet_delete" not in target_rows(p).schema.names


def test_a_crash_at_every_step_of_a_merge_batch_then_a_rerun_leaves_the_same_table(
        spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(merge_config(aws, lake, target_format), spark)
    record(p.changelog, [put(s3, landing, "dms/LOAD00000001.csv", dms_csv(FULL_LOAD))])
    p.loader().drain()
    done = [FULL_LOAD]
    for i, step in enumerate(CRASH_POINTS):
        changes = [("U", 200 + 10 * i, 1 + i % 6, f"crash-{step}", 100.0 + i),
                   ("D", 205 + 10 * i, 7 + i, "", 0.0), ("I", 201 + 10 * i, 7 + i, f"new-{i}", 1.0)]
        event = put(s3, landing, f"dms/cdc-{i}.csv", dms_csv(changes))
        record(p.changelog, [event, event])  # with a duplicate notification
        with pytest.raises(Crash):
            crashing(p.loader(), step).run_batch()
        p.loader().drain()
        done.append(changes)
        assert table_state(p) == source_state(done), step
    assert {r["key"]: r["status"] for r in ledger_rows(p)} == {
        "dms/LOAD00000001.csv": "loaded", **{f"dms/cdc-{i}.csv": "loaded" for i in range(len(CRASH_POINTS))}}


def test_replace_and_remove_rows_beside_a_merge_and_what_a_bad_batch_says(
        spark: Any, aws: AwsSection, target_format: str) -> None:
    """A row belongs to the object whose change wrote it last: an overwritten object's earlier rows
    that its new version does not change again are deleted (replace), a removed object's rows are
    deleted (remove-rows); a row without a key is left out and said; a --delete-when or key Spark
    cannot use fails its batch in one line, and the fixed settings load it once."""
    landing, lake, s3 = new_lake(aws)
    base = merge_config(aws, lake, target_format, on_overwrite="replace", on_delete="remove-rows")
    bad = replace(base, merge=replace(base.merge, delete_when="Op = = 'D'"))
    p = parts(base, spark)
    record(p.changelog, [put(s3, landing, "full.csv", dms_csv(FULL_LOAD[:3]) + b"I,,,nokey,9.0\n")])
    with pytest.raises(TerminalError, match="--delete-when \"Op = = 'D'\": Spark cannot run it: ") as failed:
        parts(bad, spark).loader().drain()
    assert "\n" not in str(failed.value)
    missing = replace(base, merge=replace(base.merge, merge_key=("order_id",)))
    with pytest.raises(TerminalError, match=r"rows have no column order_id \(they have Op, ts, id, name"):
        parts(missing, spark).loader().drain()
    assert target_rows(p).num_rows == 0  # nothing committed by the failed batches
    p.loader().drain()
    assert table_state(p) == [(1, "n1", 1.0), (2, "n2", 2.0), (3, "n3", 3.0)]
    assert "1 rows with a null --merge-key column not loaded" in ledger_rows(p)[0]["reason"]
    record(p.changelog, [put(s3, landing, "cdc.csv", dms_csv([("U", 10, 2, "n2b", 20.0)]))])
    p.loader().drain()
    # a new version of full.csv: id 1 changed again, id 3 gone from it (its row deleted), id 2's
    # row belongs to cdc.csv now and stays
    record(p.changelog, [put(s3, landing, "full.csv", dms_csv([("I", 20, 1, "n1v2", 1.5)]))])
    p.loader().drain()
    assert table_state(p) == [(1, "n1v2", 1.5), (2, "n2b", 20.0)]
    s3.delete_object(Bucket=landing, Key="cdc.csv")
    record(p.changelog, [ObjectEvent(landing, "cdc.csv", "ObjectRemoved:Delete", datetime.now(UTC))])
    p.loader().drain()
    assert table_state(p) == [(1, "n1v2", 1.5)]
