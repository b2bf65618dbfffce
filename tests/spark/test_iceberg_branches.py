"""A loader run leaves no Iceberg staging branch behind: the branch keeps its snapshots from
expiring, and one per loader process piled up."""

from __future__ import annotations

from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.job import main
from tests.spark.loader_helpers import make_config, new_lake, parts, record, target_rows, upload

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def test_the_staging_branch_is_dropped_when_the_run_ends(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 2, 3)
    p = parts(make_config(aws, lake, target_format="iceberg"), spark)
    record(p.changelog, upload(s3, landing, files))
    flags = ["--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders", "--schema",
             SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or "", "--target-format", "iceberg"]
    for _ in range(2):  # two runs, two processes' worth of branches
        assert main(["run", "--drain", *flags]) == 0
    assert target_rows(p).num_rows == 6
    assert set(p.target.table().metadata.refs) == {"main"}


class VacuumBeforePublish:
    """The loader's target, with another process's `vacuum` run between its stage and its publish."""

    def __init__(self, target: Any, other: Any) -> None:
        self.target, self.other = target, other
        self.said: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)

    def publish(self, staged: Any) -> int:
        self.said += self.other.vacuum(1.0, dry_run=False)
        return int(self.target.publish(staged))


def test_vacuum_keeps_a_live_loaders_branch(spark: Any, aws: AwsSection) -> None:
    """Before: vacuum dropped every lakeinlet_* branch but its own, a loader's between its stage
    and its publish included, whose publish then failed; its dry run called it older than 168 h."""
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, target_format="iceberg")
    p, other = parts(config, spark), parts(config, spark)
    record(p.changelog, upload(s3, landing, make_files("parquet", 2, 3)))
    p.target = racing = VacuumBeforePublish(p.target, other.target)  # type: ignore[assignment]
    p.loader().drain()
    assert target_rows(p).num_rows == 6
    assert not [s for s in racing.said if s.startswith("branch ")]
