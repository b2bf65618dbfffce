"""Adapter: the quarantine table (Delta) of malformed JSON/CSV records, kept for repair and replay."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from deltalake.transaction import AddAction, CommitProperties, RemoveAction, Transaction

from lakeinlet.aws import AwsSection
from lakeinlet.delta_io import LatestTable, record_version
from lakeinlet.incremental.targets.delta.files import data_files
from lakeinlet.storage import TableLocation

QUARANTINE_SCHEMA = pa.schema([
    ("_source_bucket", pa.string()), ("_source_key", pa.string()), ("_source_etag", pa.string()),
    ("_source_event_time", pa.timestamp("us", tz="UTC")), ("_ingest_batch", pa.string()),
    ("line", pa.int64()), ("record", pa.string())])


def valid_utf8(text: Any) -> Any:
    """A Spark string column made valid UTF-8 (U+FFFD for what does not decode): Spark 4's
    `make_valid_utf8`; on 3.5, `encode` goes through a Java string, which replaces the same way."""
    from pyspark.sql import functions as F

    if hasattr(F, "make_valid_utf8"):
        return F.make_valid_utf8(text)
    return F.decode(F.encode(text, "UTF-8"), "UTF-8")


class DeltaQuarantine:
    """The quarantine table at `uri` (default `<table>_quarantine`); created on first use.

    Each row holds one raw record as it was in the object, the object (bucket, key, etag), its
    line number and the batch that read it. Spark stages a batch's records under
    `data/<batch id>/` before the target commit (`stage`); after the commit they are committed here
    with `txn(<app id>:quarantine, target version)` (`commit`), so a crash in between is repaired
    from the target's history (the staged files are still there) and nothing is recorded twice.
    """

    def __init__(self, where: str | TableLocation, aws: AwsSection, app_id: str,
                 spark_scheme: str = "s3a") -> None:
        self.location = TableLocation.of(where, spark_scheme)
        self.uri, self.spark_uri = self.location.uri, self.location.spark
        self.app_id = app_id + ":quarantine"
        self._options = self.location.options(aws)
        self._latest = LatestTable(self.uri, self._options)
        self.fs, self.root = self.location.filesystem(aws)

    def table(self) -> DeltaTable | None:
        return self._latest.get()

    def read(self) -> pa.Table:
        dt = self.table()
        return QUARANTINE_SCHEMA.empty_table() if dt is None else dt.to_pyarrow_dataset().to_table()

    def stage(self, records: Any, batch_id: str) -> None:
        """Spark writes the batch's records under `data/<batch id>/` (one attempt overwrites a
        previous attempt of the same batch id; batch ids are unique per attempt anyway). A record
        that is not UTF-8 (binary or compressed bytes read as text) is kept with each byte
        sequence that does not decode replaced by U+FFFD, so the table stays a valid Delta table
        of strings that every reader decodes; its exact bytes stay in the object (bucket, key,
        etag and line name them)."""
        cols = [valid_utf8(records["record"]).alias("record") if c == "record" else c
                for c in QUARANTINE_SCHEMA.names]
        records.select(*cols).write.mode("overwrite").parquet(f"{self.spark_uri}/data/{batch_id}")

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        """Staged records of batches that never committed, older than the retention."""
        from lakeinlet.incremental.targets.delta.vacuum import vacuum_table

        return vacuum_table(self.table(), retention_hours, dry_run)

    def last_version(self) -> int:
        dt = self.table()
        found = None if dt is None else dt.transaction_version(self.app_id)
        return -1 if found is None else int(found)

    def commit(self, batch_id: str, target_version: int) -> None:
        """Commit the staged files of `batch_id` (idempotent per target version)."""
        if target_version <= self.last_version():
            return
        files = data_files(self.fs, self.root, f"data/{batch_id}", [])
        adds: list[AddAction | RemoveAction] = [
            AddAction(f.path, f.size, {}, f.modification_time, True, f.stats) for f in files]
        props = CommitProperties(app_transactions=[Transaction(self.app_id, target_version)],
                                 custom_metadata={"lakeinlet.batch": batch_id})

        def write() -> None:
            dt = self.table() or DeltaTable.create(self.uri, QUARANTINE_SCHEMA, mode="ignore",
                                                   storage_options=self._options)
            dt.create_write_transaction(adds, mode="append", schema=QUARANTINE_SCHEMA,
                                        commit_properties=props)

        record_version(write, self.last_version, target_version)
