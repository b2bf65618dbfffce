"""Engine error texts read in each format's one place (`targets/*/answers.py`): what hudi-rs says of a
missing table, what pyiceberg says when two loaders open a new SQL catalog at once."""

from __future__ import annotations

import pytest

from lakeinlet.incremental.targets.hudi.answers import no_table
from lakeinlet.incremental.targets.iceberg.answers import catalog_tables_raced

pytestmark = pytest.mark.unit


def test_hudi_rs_no_table_is_read_from_its_answer_and_nothing_else_is() -> None:
    assert no_table(RuntimeError("Failed to read /lake/t/.hoodie/hoodie.properties"))
    assert no_table(OSError("Object at location lake/t/.hoodie Not Found"))
    assert not no_table(PermissionError("access denied to s3://lake/t"))


def test_a_sql_catalog_opened_twice_at_once_is_read_from_its_answer_and_nothing_else_is() -> None:
    said = "(sqlite3.OperationalError) table iceberg_tables {}"
    assert catalog_tables_raced(RuntimeError(said.format("already exists")))
    assert not catalog_tables_raced(RuntimeError(said.format("is locked")))
