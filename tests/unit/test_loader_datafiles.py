"""Data files → Delta add actions: partition values from folders, stats from footers (no Spark)."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.job import main
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.targets.delta.files import data_files, partition_values
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.storage import filesystem
from tests.targets import commit

pytestmark = pytest.mark.unit


def test_partition_values_unescape_and_null() -> None:
    assert partition_values("data/b1/day=2026-11-01/h=10%3A00/part-0.parquet", ["day", "h"]) == {
        "day": "2026-11-01", "h": "10:00"}
    assert partition_values("data/b1/day=__HIVE_DEFAULT_PARTITION__/p.parquet", ["day"]) == {"day": None}


def test_a_string_column_that_is_not_utf8_has_no_bounds_and_never_fails_the_commit(tmp_path: Path) -> None:
    """Binary bytes in a string column (a quarantined record, a staged row) used to raise
    UnicodeDecodeError in the stats, after the target's commit."""
    offsets = pa.array([0, 2, 4], pa.int32()).buffers()[1]
    binary = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(b"ok\xff\xfe")])
    (tmp_path / "data").mkdir()
    pq.write_table(pa.table({"record": binary, "n": [1, 2]}), tmp_path / "data" / "f.parquet",
                   row_group_size=1)
    fs, root = filesystem(str(tmp_path), AwsSection())
    stats = json.loads(data_files(fs, root, "data", [])[0].stats)
    assert stats["minValues"] == {"n": 1} and stats["maxValues"] == {"n": 2}  # no half bounds for record
    assert stats["numRecords"] == 2 and stats["nullCount"] == {"record": 0, "n": 0}


def test_committed_files_carry_footer_stats_and_are_read_back(tmp_path: Path) -> None:
    root = tmp_path / "t"
    folder = root / "data" / "b1" / "day=2026-11-01"
    folder.mkdir(parents=True)
    ts = [datetime(2026, 11, 1, 1, tzinfo=UTC), datetime(2026, 11, 1, 5, tzinfo=UTC)]
    pq.write_table(pa.table({"id": [3, 9, None], "ts": pa.array([*ts, None], pa.timestamp("us", tz="UTC"))}),
                   folder / "part-0.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    fs, base = filesystem(str(root), AwsSection())
    files = data_files(fs, base, "data/b1", ["day"])
    assert [f.path for f in files] == ["data/b1/day=2026-11-01/part-0.parquet"]
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")), ("day", pa.string())])
    target = DeltaTarget(str(root), AwsSection(), "app", ["day"])
    target._write = lambda df, batch_id, size: files  # type: ignore[method-assign]  # what Spark wrote
    commit(target, ReadBatch(object(), schema, {}, {}, {}), Position(-1), Position(0), "b1", [])
    dt = target.table()
    assert dt is not None
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()[0]
    assert actions["num_records"] == 3
    assert (actions["min.id"], actions["max.id"], actions["null_count.id"]) == (3, 9, 1)
    assert actions["partition.day"] == "2026-11-01"
    got = dt.to_pyarrow_dataset().to_table()
    assert sorted(got.column("id").to_pylist(), key=str) == [3, 9, None]
    assert set(got.column("day").to_pylist()) == {"2026-11-01"}


def _batch(root: Path, batch: str, ids: list[int], age_hours: float = 0) -> Path:
    folder = root / "data" / batch
    folder.mkdir(parents=True)
    path = folder / "part-0.parquet"
    pq.write_table(pa.table({"id": ids}), path)
    old = time.time() - age_hours * 3600
    os.utime(path, (old, old))
    return path


def test_vacuum_deletes_only_old_unreferenced_files(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "t"
    committed = _batch(root, "b1", [1, 2], age_hours=5)
    target = DeltaTarget(str(root), AwsSection(), "app")
    fs, base = filesystem(str(root), AwsSection())
    target._write = lambda df, batch_id, size: data_files(fs, base, "data/b1", [])  # type: ignore[method-assign]
    commit(target, ReadBatch(object(), pa.schema([("id", pa.int64())]), {}, {}, {}), Position(-1),
                  Position(0), "b1", [])
    crashed = _batch(root, "b2-crashed", [3], age_hours=5)  # a batch that never committed
    running = _batch(root, "b3-running", [4])  # a batch being written right now
    flags = ["--changelog", str(tmp_path / "cl"), "--table", str(root)]
    assert main(["vacuum", "--dry-run", "--retention-hours", "1", *flags]) == 0
    out = capsys.readouterr().out
    assert "data/b2-crashed/part-0.parquet" in out and "b3-running" not in out and "b1/" not in out
    assert crashed.exists()
    assert main(["vacuum", "--retention-hours", "0.5", *flags]) == 2  # shorter than any batch may take
    assert main(["vacuum", "--retention-hours", "1", *flags]) == 0
    assert not crashed.exists() and running.exists() and committed.exists()
    assert sorted(DeltaTable(str(root)).to_pyarrow_dataset().to_table().column("id").to_pylist()) == [1, 2]
