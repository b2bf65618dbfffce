"""Adapter: Delta and Hudi target tables registered in the AWS Glue Data Catalog (boto3), so Athena,
Trino and Spark on Glue find them by name. The table's own log stays the truth; Glue only points
engines at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.registry import CatalogRef
from lakeinlet.incremental.targets.hudi.target import META_COLUMNS
from lakeinlet.storage import delta_uri

_SIMPLE = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
           pa.float32(): "float", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string",
           pa.large_string(): "string", pa.string_view(): "string", pa.binary(): "binary",
           pa.large_binary(): "binary", pa.binary_view(): "binary", pa.date32(): "date"}
_BATCH = 100  # BatchCreatePartition's limit (Hudi's AWSGlueCatalogSyncClient chunks the same way)
_TRANSIENT = ("InternalServiceException", "OperationTimeoutException", "ThrottlingException")


def hive_type(t: pa.DataType) -> str:
    """The Hive/Glue column type for a pyarrow type; `string` for types Hive has no name for."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_decimal128(t):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, pa.ListType | pa.LargeListType | pa.FixedSizeListType):
        return f"array<{hive_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type)},{hive_type(t.item_type)}>"
    if pa.types.is_struct(t):
        # Lowercase as Hudi's own sync writes types; Hive resolves field names case-insensitively.
        return "struct<" + ",".join(f"{f.name.lower()}:{hive_type(f.type)}" for f in t) + ">"
    return "string"


# Every table is EXTERNAL (TableType and EXTERNAL=TRUE), so dropping it in an engine leaves the data:
# Trino's DeltaLakeMetadata.deltaTableProperties and Hudi's AWSGlueCatalogSyncClient.createTable both
# write that. Both formats carry the location again as the SerDe parameter `path` (see table_input).
_FORMATS: dict[str, dict[str, Any]] = {
    "delta": {
        # spark.sql.sources.provider: how Trino's Delta connector (HiveMetastoreBackedDeltaLakeMetastore.
        # verifyDeltaLakeTable, case-insensitive) and Spark recognise a Delta table; the Athena guide
        # "Synchronize Delta Lake metadata" writes it lowercase. table_type=DELTA: what Athena's own
        # CREATE EXTERNAL TABLE writes ("Get started with Delta Lake tables"), for readers that look
        # only at it. Trino reads the location from `path` (getTableLocation fails without it).
        "Parameters": {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta", "table_type": "DELTA"},
        # Trino's DeltaLakeMetadata.DELTA_STORAGE_FORMAT (as Databricks writes): a Hive-only reader
        # fails on it instead of reading Parquet files the Delta log has removed.
        "InputFormat": "org.apache.hadoop.mapred.SequenceFileInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveSequenceFileOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                      "Parameters": {}}},
    "hudi": {
        # As apache/hudi's Glue sync writes a copy-on-write table: AWSGlueCatalogSyncClient.createTable
        # (EXTERNAL, hudi.metadata-listing-enabled, serialization.format), SparkDataSourceTableUtils
        # (provider, `path`, hoodie.query.as.ro.table) and HoodieInputFormatUtils (the classes).
        # Metadata-table listing is off: lakeinlet writes no metadata table (hoodie.metadata.enable).
        "Parameters": {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi",
                       "hudi.metadata-listing-enabled": "FALSE"},
        "InputFormat": "org.apache.hudi.hadoop.HoodieParquetInputFormat",
        "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                      "Parameters": {"serialization.format": "1", "hoodie.query.as.ro.table": "false"}}},
}


@dataclass(frozen=True)
class TableEntry:
    """What Glue should say of one target table. Columns carry the table's schema even for Delta
    (whose engines read the log): Athena's Lake Formation, views and row filters need them."""

    fmt: str
    location: str
    schema: pa.Schema
    partition_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.fmt not in _FORMATS:
            raise ConfigError([f"catalog registration: expected a delta or hudi table, found {self.fmt}"])
        # Athena and Glue read s3:// only; Spark may be configured with s3a://.
        object.__setattr__(self, "location", delta_uri(self.location))

    def table_input(self, name: str) -> dict[str, Any]:
        """Glue's TableInput for this table under `name` (partition columns only in PartitionKeys)."""
        fmt = _FORMATS[self.fmt]
        types = {f.name: hive_type(f.type) for f in self.schema}
        data = [(c, t) for c, t in types.items() if c not in self.partition_by]
        if self.fmt == "hudi":  # HiveSyncTool registers Hudi's meta columns unless told to omit them
            data = [(c, "string") for c in META_COLUMNS if c not in types] + data
        keys = [(c, types.get(c, "string")) for c in self.partition_by]  # Hudi's default: string
        serde = fmt["SerdeInfo"]
        return {"Name": name, "TableType": "EXTERNAL_TABLE", "Parameters": dict(fmt["Parameters"]),
                "PartitionKeys": _columns(keys),
                "StorageDescriptor": {
                    "Columns": _columns(data), "Location": self.location,
                    "InputFormat": fmt["InputFormat"], "OutputFormat": fmt["OutputFormat"],
                    "SerdeInfo": {"SerializationLibrary": serde["SerializationLibrary"],
                                  "Parameters": {**serde["Parameters"], "path": self.location}}}}

    def partition_location(self, values: dict[str, str]) -> str:
        """The folder of one partition: the Hudi target writes hive-style paths (`day=1/region=eu`)."""
        return self.location.rstrip("/") + "/" + "/".join(f"{c}={values[c]}" for c in self.partition_by)


class GlueRegistry:
    """Target tables in the Glue Data Catalog of the account and region `aws` reaches."""

    def __init__(self, aws: AwsSection) -> None:
        self._glue = client("glue", aws)

    def sync(self, ref: CatalogRef, entry: TableEntry) -> str:
        """Create the table (and its database) or bring it in step: "created", "updated" or
        "unchanged". A table in step costs one GetTable, so every run can call this."""
        want = entry.table_input(ref.table)
        have = self._table(ref)
        with _translated(ref):
            if have is None:
                self._ensure_database(ref.database)
                self._glue.create_table(DatabaseName=ref.database, TableInput=want)
                return "created"
            if not differences(have, want):
                return "unchanged"
            # Keep parameters other writers added (Hudi's own sync records its last commit there).
            want["Parameters"] = {**have.get("Parameters", {}), **want["Parameters"]}
            self._glue.update_table(DatabaseName=ref.database, TableInput=want)
        return "updated"

    def add_partitions(self, ref: CatalogRef, entry: TableEntry, values: list[dict[str, str]]) -> int:
        """Register Hudi partitions (each a {column: value} dict); how many were new. Delta tables
        have none to register: engines take a Delta table's partitions from its log."""
        _glue_only(ref)
        if entry.fmt != "hudi" or not entry.partition_by:
            return 0
        sd = entry.table_input(ref.table)["StorageDescriptor"]
        unique = {tuple(v[c] for c in entry.partition_by): v for v in values}
        inputs = [{"Values": list(key), "StorageDescriptor": sd | {"Location": entry.partition_location(v)}}
                  for key, v in unique.items()]
        new = 0
        for start in range(0, len(inputs), _BATCH):
            chunk = inputs[start:start + _BATCH]
            with _translated(ref):
                answer = self._glue.batch_create_partition(
                    DatabaseName=ref.database, TableName=ref.table, PartitionInputList=chunk)
            errors = [e["ErrorDetail"] for e in answer.get("Errors", [])]
            failed = [e for e in errors if e["ErrorCode"] != "AlreadyExistsException"]
            if failed:
                code = failed[0]["ErrorCode"]
                why = f"glue:BatchCreatePartition on {ref}: {code}: {failed[0].get('ErrorMessage', '')}"
                raise (TransientError if code in _TRANSIENT else TerminalError)(why)
            new += len(chunk) - len(errors)
        return new

    def out_of_step(self, ref: CatalogRef, entry: TableEntry) -> str | None:
        """One line saying how the Glue table differs from `entry`, or None when it is in step."""
        have = self._table(ref)
        if have is None:
            return f"{ref}: no such table"
        found = differences(have, entry.table_input(ref.table))
        return f"{ref}: " + "; ".join(found) if found else None

    def _table(self, ref: CatalogRef) -> dict[str, Any] | None:
        _glue_only(ref)
        with _translated(ref):
            try:
                return dict(self._glue.get_table(DatabaseName=ref.database, Name=ref.table)["Table"])
            except self._glue.exceptions.EntityNotFoundException:  # no such table, or no such database
                return None

    def _ensure_database(self, database: str) -> None:
        # Asked first: a role allowed to create tables in an existing database may not create databases.
        try:
            self._glue.get_database(Name=database)
        except self._glue.exceptions.EntityNotFoundException:
            self._glue.create_database(DatabaseInput={"Name": database})


def _glue_only(ref: CatalogRef) -> None:
    if ref.kind != "glue":
        raise ConfigError([f"catalog {ref}: this registry writes to Glue, expected glue:DATABASE.TABLE"])


@contextmanager
def _translated(ref: CatalogRef) -> Iterator[None]:
    """Access denied becomes a TerminalError naming the permission; other errors pass through
    (botocore has already retried throttling and 5xx)."""
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        if error.get("Code") not in ("AccessDeniedException", "AccessDenied"):
            raise
        why = " ".join(str(error.get("Message", "")).split())
        raise TerminalError(f"glue:{exc.operation_name} on {ref} denied: {why}") from exc


def _columns(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    # Glue and Hive keep column names lowercase; comparing what Glue returns needs the same.
    return [{"Name": name.lower(), "Type": type_} for name, type_ in pairs]


def differences(have: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """How a Glue table (`have`) differs from a TableInput (`want`), one phrase each."""
    hsd, wsd = have.get("StorageDescriptor", {}), want["StorageDescriptor"]
    got = {c["Name"]: c["Type"] for c in hsd.get("Columns", [])}
    wanted = {c["Name"]: c["Type"] for c in wsd["Columns"]}
    found = []
    if missing := [c for c in wanted if c not in got]:
        found.append("missing columns " + ", ".join(missing))
    if extra := [c for c in got if c not in wanted]:
        found.append("extra columns " + ", ".join(extra))
    if changed := [f"{c} {got[c]} (expected {t})" for c, t in wanted.items() if got.get(c, t) != t]:
        found.append("column types " + ", ".join(changed))
    keys, want_keys = (", ".join(f"{k['Name']} {k['Type']}" for k in t.get("PartitionKeys", []))
                       for t in (have, want))
    if keys != want_keys:
        found.append(f"partition keys ({keys}) (expected ({want_keys}))")
    if hsd.get("Location") != wsd["Location"]:
        found.append(f"location {hsd.get('Location')} (expected {wsd['Location']})")
    have_settings = _settings(have)
    if drift := [k for k, v in _settings(want).items() if have_settings.get(k) != v]:
        found.append("format settings " + ", ".join(drift))
    return found


def _settings(table: dict[str, Any]) -> dict[str, Any]:
    """A table's format in one map: parameters, SerDe parameters and classes (extra ones allowed)."""
    sd = table.get("StorageDescriptor", {})
    serde = sd.get("SerdeInfo", {})
    return {**table.get("Parameters", {}),
            **{f"serde {k}": v for k, v in serde.get("Parameters", {}).items()},
            "InputFormat": sd.get("InputFormat"), "OutputFormat": sd.get("OutputFormat"),
            "SerializationLibrary": serde.get("SerializationLibrary")}
