"""What a Hudi table tells a catalog (Glue, a Hive metastore) of itself when registered: the entry
Hudi's own sync writes, and the table's partitions (hudi-rs lists them)."""

from __future__ import annotations

from typing import Any

from lakeinlet.incremental.ports import CatalogFormat
from lakeinlet.incremental.targets.hudi.write_options import META_COLUMNS

HUDI_CATALOG = CatalogFormat(
    # As apache/hudi's Glue sync writes a copy-on-write table: AWSGlueCatalogSyncClient.createTable
    # (EXTERNAL, hudi.metadata-listing-enabled, serialization.format), SparkDataSourceTableUtils
    # (provider, `path`, hoodie.query.as.ro.table) and HoodieInputFormatUtils (the classes).
    # Metadata-table listing is off: lakeinlet writes no metadata table (hoodie.metadata.enable).
    parameters={"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi",
                "hudi.metadata-listing-enabled": "FALSE"},
    input_format="org.apache.hudi.hadoop.HoodieParquetInputFormat",
    output_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    serde="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    serde_parameters={"serialization.format": "1", "hoodie.query.as.ro.table": "false"},
    meta_columns=META_COLUMNS,
    partitions_registered=True)
"""A Hudi table's catalog entry (`registry.entry.TableEntry` takes it)."""


def partitions(table: Any) -> list[dict[str, str]]:
    """The partitions of a hudi-rs table (None: no table yet) as {column: value}, from the
    hive-style paths the Hudi target writes (`day=1/region=eu`)."""
    from lakeinlet.incremental.targets.hudi.arrow_fallback import partition_paths

    paths = partition_paths(table) if table is not None else []
    return [dict(p.split("=", 1) for p in path.split("/")) for path in paths if path]
