"""Data files → Delta add actions: partition values from folders, stats from footers (no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.datafiles import data_files, filesystem, partition_values
from lakeinlet.incremental.delta_target import DeltaTarget
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.ports import ReadResult

pytestmark = pytest.mark.unit


def test_partition_values_unescape_and_null() -> None:
    assert partition_values("data/b1/day=2026-11-01/h=10%3A00/part-0.parquet", ["day", "h"]) == {
        "day": "2026-11-01", "h": "10:00"}
    assert partition_values("data/b1/day=__HIVE_DEFAULT_PARTITION__/p.parquet", ["day"]) == {"day": None}


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
    target.commit(ReadResult(tuple(files), schema, {}, {}, {}), Position(-1), Position(0), "b1", [])
    dt = target.table()
    assert dt is not None
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()[0]
    assert actions["num_records"] == 3
    assert (actions["min.id"], actions["max.id"], actions["null_count.id"]) == (3, 9, 1)
    assert actions["partition.day"] == "2026-11-01"
    got = dt.to_pyarrow_dataset().to_table()
    assert sorted(got.column("id").to_pylist(), key=str) == [3, 9, None]
    assert set(got.column("day").to_pylist()) == {"2026-11-01"}
