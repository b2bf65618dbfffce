"""What a Delta table tells a catalog (Glue, a Hive metastore) of itself when registered."""

from __future__ import annotations

from lakeinlet.incremental.ports import CatalogFormat

DELTA_CATALOG = CatalogFormat(
    # spark.sql.sources.provider: how Trino's Delta connector (HiveMetastoreBackedDeltaLakeMetastore.
    # verifyDeltaLakeTable, case-insensitive) and Spark recognise a Delta table; the Athena guide
    # "Synchronize Delta Lake metadata" writes it lowercase. table_type=DELTA: what Athena's own
    # CREATE EXTERNAL TABLE writes ("Get started with Delta Lake tables"), for readers that look
    # only at it. Trino reads the location from `path` (getTableLocation fails without it).
    parameters={"EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta", "table_type": "DELTA"},
    # Trino's DeltaLakeMetadata.DELTA_STORAGE_FORMAT (as Databricks writes): a Hive-only reader
    # fails on it instead of reading Parquet files the Delta log has removed.
    input_format="org.apache.hadoop.mapred.SequenceFileInputFormat",
    output_format="org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
    serde="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
    serde_parameters={},
    # Engines take a Delta table's partitions from its log: none to register.
    partitions_registered=False)
"""A Delta table's catalog entry (`registry.entry.TableEntry` takes it)."""
