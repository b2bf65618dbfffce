"""The Delta target's listing of written files skips committers' leftovers at any depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.targets.delta.files import hidden, list_written
from lakeinlet.storage import filesystem

pytestmark = pytest.mark.unit

DATA = ["day=2026-11-01/part-0.parquet", "_src=a/part-1.parquet",
        "day=__HIVE_DEFAULT_PARTITION__/part-2.parquet", "part-3.parquet"]
LEFTOVERS = ["__magic/job-1/tasks/attempt_1/__base/day=2026-11-01/part-9.parquet",
             "_temporary/0/_temporary/attempt_1/day=2026-11-01/part-9.parquet",
             ".spark-staging-1/day=2026-11-01/part-9.parquet", "day=2026-11-01/.part-0.parquet",
             "day=2026-11-01/_part-0.parquet", "_SUCCESS"]
NOT_PARQUET = ["day=2026-11-01/part-0.parquet.crc", "day=2026-11-01/notes.txt"]


def test_hidden_follows_sparks_rule_on_every_component() -> None:
    assert not any(hidden(p) for p in DATA)
    assert all(hidden(p) for p in LEFTOVERS)


def test_listing_keeps_data_files_only_even_under_an_underscored_root(tmp_path: Path) -> None:
    root = tmp_path / "_lake" / ".t"  # the table's own location may look hidden: only what is below counts
    for rel in DATA + LEFTOVERS + NOT_PARQUET:
        (root / "data" / "b1" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "data" / "b1" / rel).write_bytes(b"x")
    fs, base = filesystem(str(root), AwsSection())
    assert [p for p, _, _ in list_written(fs, base, "data/b1")] == sorted(f"data/b1/{p}" for p in DATA)
