"""Adapter: Delta and Hudi target tables registered in the AWS Glue Data Catalog (boto3), so Athena,
Trino and Spark on Glue find them by name. The table's own log stays the truth; Glue only points
engines at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.registry import CatalogRef
from lakeinlet.incremental.registry.entry import TableEntry, differences

_BATCH = 100  # BatchCreatePartition's limit (Hudi's AWSGlueCatalogSyncClient chunks the same way)
_TRANSIENT = ("InternalServiceException", "OperationTimeoutException", "ThrottlingException")



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
        if not entry.fmt.partitions_registered or not entry.partition_by:
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


