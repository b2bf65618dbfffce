"""The columns every target row carries (lineage), and the schema of a table created without rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

LINEAGE_SCHEMA = pa.schema([
    ("_source_bucket", pa.string()), ("_source_key", pa.string()), ("_source_etag", pa.string()),
    ("_source_event_time", pa.timestamp("us", tz="UTC")), ("_ingest_batch", pa.string())])
"""Columns every target row carries."""


def fallback_schema(partition_by: Sequence[str]) -> pa.Schema:
    """The schema of a table whose first commit has no rows: the lineage columns, and the
    partition columns as strings (a partitioned table needs them from its creation)."""
    extra = [pa.field(c, pa.string()) for c in partition_by if c not in LINEAGE_SCHEMA.names]
    return pa.schema([*LINEAGE_SCHEMA, *extra])


def spark_schema(schema: pa.Schema) -> Any:
    """The Spark schema of a pyarrow one, timestamps without a zone kept as TIMESTAMP_NTZ."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=True)
