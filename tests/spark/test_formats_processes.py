"""Two loader processes on one table at once, per target format: each object's rows land once.

Delta and Iceberg let both load and reject the loser's commit (it re-plans from the winner's
checkpoint); Hudi lets only the holder of the table's writer lease load while the other waits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from tests.spark.loader_helpers import (
    finish_racing,
    ledger_rows,
    make_config,
    new_lake,
    parts,
    record,
    target_rows,
    upload,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _loader(lake: str, aws: AwsSection, fmt: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "lakeinlet.incremental.job", "run", "--drain", "--max-files", "1",
           "--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders",
           "--target-format", fmt, "--schema", SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or "",
           "--master", "local[1]", "--log-format", "json"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ | {"PYSPARK_PYTHON": sys.executable})


def test_two_loader_processes_load_each_object_once(aws: AwsSection, iceberg_catalog: str,
                                                    target_format: str, tmp_path: Path) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 6, 2)
    p = parts(make_config(aws, lake, target_format=target_format), None)
    for f in files:
        record(p.changelog, upload(s3, landing, [f]))  # 6 changelog versions: 6 batches to race on
    loaders = [_loader(lake, aws, target_format) for _ in range(2)]
    seen = finish_racing(loaders, tmp_path, timeout=900)
    assert sum(s["batch"] for s in seen) == len(files), seen  # every batch committed once
    assert sum(s["conflict"] + s["lease_wait"] for s in seen) >= 1, seen  # they did overlap
    table = target_rows(p)
    expected = sorted(r["order_id"] for f in files for r in f.rows)
    assert sorted(table.column("order_id").to_pylist()) == expected
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}
