"""File sizing at write time: a batch of many small objects is written as one file per partition
value (per target file size), in every format."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from tests.spark.loader_helpers import make_config, new_lake, parts, record, target_rows, upload

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def test_a_batch_of_many_small_objects_is_one_file(spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 12, rows_per_file=2)
    p = parts(make_config(aws, lake, target_format=target_format, max_files=12), spark)
    record(p.changelog, upload(s3, landing, files))
    assert p.loader().drain().rows == 24
    head = p.target.commits(1)[0]
    assert head.files == 1, f"{head.files} files for one small batch"
    assert target_rows(p).num_rows == 24


def test_a_partitioned_batch_is_one_file_per_partition_value(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 12, rows_per_file=2)  # neighbours share a customer
    config = make_config(aws, lake, max_files=12)
    config = replace(config, tables=replace(config.tables, partition_by=("customer",)))
    p = parts(config, spark)
    record(p.changelog, upload(s3, landing, files))
    p.loader().drain()
    customers = {r["customer"] for f in files for r in f.rows}
    assert p.target.commits(1)[0].files == len(customers)
