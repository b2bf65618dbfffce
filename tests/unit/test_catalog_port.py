"""Catalog registration reached through the target port: what a format tells a catalog (its entry,
its partitions) comes from the target, whatever its format; none is imported by the wiring."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError
from lakeinlet.incremental.ports import CatalogFormat
from lakeinlet.incremental.settings import LoaderConfig, TablesSection
from lakeinlet.incremental.targets.hudi.catalog import HUDI_CATALOG
from lakeinlet.incremental.wiring import Parts

pytestmark = pytest.mark.unit


class Described:
    """A committed table that tells a catalog of itself (no engine behind it)."""

    uri = "s3://lake/events"

    def __init__(self, fmt: CatalogFormat | None, partitions: list[dict[str, str]]) -> None:
        self.catalog_format, self.partitions = fmt, partitions

    def schema(self) -> pa.Schema:
        return pa.schema([("id", pa.int64()), ("day", pa.string())])

    def catalog_partitions(self) -> list[dict[str, str]]:
        return self.partitions


def parts(target: Described, aws: AwsSection, tmp_path: Path, target_format: str = "hudi") -> Parts:
    tables = TablesSection(changelog=str(tmp_path / "changelog"), table=target.uri,
                           target_format=target_format, partition_by=("day",), catalog="glue:sales.events")
    return Parts(LoaderConfig(tables=tables, aws=aws), cast(Any, None), cast(Any, None), cast(Any, None),
                 cast(Any, target))


def test_a_table_and_its_new_partitions_are_registered_from_what_its_target_says(
        in_process_aws: AwsSection, tmp_path: Path) -> None:
    target = Described(HUDI_CATALOG, [{"day": "2026-01-01"}, {"day": "2026-01-02"}])
    p = parts(target, in_process_aws, tmp_path)
    assert p.register() == "created, +2 partitions"
    target.partitions.append({"day": "2026-01-03"})
    assert p.register() == "unchanged, +1 partitions"
    assert p.register() == "unchanged"  # partitions registered once per process
    assert p.catalog_line() == "catalog:   glue:sales.events in step with the table"
    glue = client("glue", in_process_aws)
    found = glue.get_partitions(DatabaseName="sales", TableName="events")["Partitions"]
    assert sorted(part["Values"][0] for part in found) == ["2026-01-01", "2026-01-02", "2026-01-03"]


def test_a_target_no_registry_takes_is_refused_naming_its_format(
        in_process_aws: AwsSection, tmp_path: Path) -> None:
    refused = "catalog registration: expected a delta or hudi table, found iceberg"
    with pytest.raises(ConfigError, match=refused):
        parts(Described(None, []), in_process_aws, tmp_path, "iceberg").register()


def test_status_json_says_whether_the_catalog_is_in_step(in_process_aws: AwsSection, tmp_path: Path) -> None:
    """`status --json`'s catalog_in_step/catalog_problem come from the verdict the text line says."""
    p = parts(Described(HUDI_CATALOG, []), in_process_aws, tmp_path)
    in_step, why = p.catalog_verdict() or (None, "")
    assert in_step is False and "no such table" in why
    assert p.catalog_line() == f"catalog:   OUT OF STEP: {why} (the next run repairs it)"
    p.register()
    assert p.catalog_verdict() == (True, "")
