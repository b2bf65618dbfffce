"""Adapter: Delta and Hudi target tables registered in a Hive Metastore over Thrift, so Spark, Trino
and Hive find them by name. The definition is the one Glue gets (`TableEntry.table_input`)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TException
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportException

from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.registry import CatalogRef
from lakeinlet.incremental.registry.entry import TableEntry, differences

# Without it the metastore lists the table's folder for numFiles/totalSize at every create and alter:
# slow on S3, and wrong for Delta, whose folder keeps files its log removed (Hudi's HMS sync sets it too).
_NO_STATS = ttypes.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
_TIMEOUT_MS = 60_000
_BATCH = 1000  # partitions per add_partitions_req: Hudi's HMS sync default (hive_sync.batch_num)


class HiveRegistry:
    """Target tables in the Hive Metastore at `uris`: `thrift://HOST:PORT`, or several comma-separated
    as in hive.metastore.uris (tried in order). Plain Thrift: no SASL/Kerberos."""

    def __init__(self, uris: str) -> None:
        self._uris = [u.strip() for u in uris.split(",") if u.strip()]
        if not self._uris or not all(u.startswith("thrift://") and urlsplit(u).hostname for u in self._uris):
            raise ConfigError([f"hive metastore {uris!r}: expected thrift://HOST:PORT[,thrift://HOST:PORT…]"])

    def sync(self, ref: CatalogRef, entry: TableEntry) -> str:
        """Create the table (and its database) or bring it in step: "created", "updated" or
        "unchanged". A table in step costs one connection and one get_table."""
        want = _as_stored(ref, entry).table_input(ref.table)
        with self._client(ref) as hms:
            have = _get_table(hms, ref)
            if have is None:
                _ensure_database(hms, ref.database)
                try:
                    hms.create_table_with_environment_context(_table(ref, want), _NO_STATS)
                    return "created"
                except ttypes.AlreadyExistsException:  # created by another writer since get_table
                    have = hms.get_table(ref.database, ref.table)
            if not differences(_table_input(have), want):
                return "unchanged"
            table = _table(ref, want)
            # Keep parameters other writers added (Hudi's own sync records its last commit there);
            # alter_table replaces the whole record, owner and creation time included.
            table.parameters = {**(have.parameters or {}), **table.parameters}
            table.owner, table.createTime = have.owner, have.createTime
            hms.alter_table_with_environment_context(ref.database, ref.table, table, _NO_STATS)
        return "updated"

    def add_partitions(self, ref: CatalogRef, entry: TableEntry, values: list[dict[str, str]]) -> int:
        """Register Hudi partitions (each a {column: value} dict); how many were new. Delta tables
        have none to register: engines take a Delta table's partitions from its log."""
        entry = _as_stored(ref, entry)
        if not entry.fmt.partitions_registered or not entry.partition_by or not values:
            return 0
        sd = entry.table_input(ref.table)["StorageDescriptor"]
        unique = {tuple(v[c] for c in entry.partition_by): v for v in values}
        parts = [ttypes.Partition(values=list(key), dbName=ref.database, tableName=ref.table, parameters={},
                                  sd=_storage(sd | {"Location": entry.partition_location(v)}))
                 for key, v in unique.items()]
        new = 0
        with self._client(ref) as hms:
            for start in range(0, len(parts), _BATCH):
                # ifNotExists skips the partitions already there; the answer lists only those added.
                answer = hms.add_partitions_req(ttypes.AddPartitionsRequest(
                    ref.database, ref.table, parts[start:start + _BATCH], ifNotExists=True, needResult=True))
                new += len(answer.partitions or [])
        return new

    def out_of_step(self, ref: CatalogRef, entry: TableEntry) -> str | None:
        """One line saying how the metastore's table differs from `entry`, or None when in step."""
        want = _as_stored(ref, entry).table_input(ref.table)
        with self._client(ref) as hms:
            have = _get_table(hms, ref)
        if have is None:
            return f"{ref}: no such table"
        found = differences(_table_input(have), want)
        return f"{ref}: " + "; ".join(found) if found else None

    @contextmanager
    def _client(self, ref: CatalogRef) -> Iterator[Any]:
        """A connection for one call (a run makes a few: nothing to keep alive). A lost connection
        becomes a TransientError; the metastore's own exceptions (MetaException, …) TerminalErrors."""
        failed = []
        for uri in self._uris:
            where = urlsplit(uri)
            sock = TSocket(where.hostname, where.port or 9083)
            sock.setTimeout(_TIMEOUT_MS)
            transport = TBufferedTransport(sock)
            try:
                transport.open()
                break
            except TTransportException as exc:
                failed.append(f"{uri} ({_said(exc)})")
        else:
            raise TransientError(f"hive metastore unreachable for {ref}: " + "; ".join(failed))
        try:
            yield ThriftHiveMetastore.Client(TBinaryProtocol(transport))
        except (TTransportException, OSError) as exc:
            raise TransientError(f"hive metastore {uri} on {ref}: connection lost ({_said(exc)})") from exc
        except TException as exc:
            raise TerminalError(f"hive metastore {uri} on {ref}: {type(exc).__name__}: {_said(exc)}") from exc
        finally:
            transport.close()


def _as_stored(ref: CatalogRef, entry: TableEntry) -> TableEntry:
    """`entry` with its location as the metastore stores it (Hadoop's Path form): a local folder as
    `file:/abs/path`, no trailing slash. Otherwise every sync would find the table moved."""
    if ref.kind != "hive":
        raise ConfigError([f"catalog {ref}: this registry writes to a Hive metastore, "
                           "expected hive:DATABASE.TABLE"])
    where = urlsplit(entry.location)
    if not where.scheme:
        location = "file:" + os.path.abspath(entry.location)
    elif where.scheme == "file":
        location = "file:" + (where.path.rstrip("/") or "/")
    else:
        location = entry.location.rstrip("/")
    return dataclasses.replace(entry, location=location)


def _get_table(hms: Any, ref: CatalogRef) -> ttypes.Table | None:
    try:
        return hms.get_table(ref.database, ref.table)
    except ttypes.NoSuchObjectException:  # no such table, or no such database
        return None


def _ensure_database(hms: Any, database: str) -> None:
    try:
        hms.get_database(database)
    except ttypes.NoSuchObjectException:
        with suppress(ttypes.AlreadyExistsException):  # created by another writer meanwhile
            hms.create_database(ttypes.Database(name=database, parameters={}))


def _table(ref: CatalogRef, want: dict[str, Any]) -> ttypes.Table:
    """A Glue TableInput as the metastore's Table: the same fields under Hive's names."""
    return ttypes.Table(tableName=ref.table, dbName=ref.database, tableType=want["TableType"],
                        parameters=dict(want["Parameters"]), partitionKeys=_fields(want["PartitionKeys"]),
                        sd=_storage(want["StorageDescriptor"]))


def _storage(sd: dict[str, Any]) -> ttypes.StorageDescriptor:
    serde = ttypes.SerDeInfo(serializationLib=sd["SerdeInfo"]["SerializationLibrary"],
                             parameters=dict(sd["SerdeInfo"]["Parameters"]))
    # Empty lists, not nulls: Hive's and Spark's readers of a table take bucket and sort columns as given.
    return ttypes.StorageDescriptor(cols=_fields(sd["Columns"]), location=sd["Location"], serdeInfo=serde,
                                    inputFormat=sd["InputFormat"], outputFormat=sd["OutputFormat"],
                                    compressed=False, numBuckets=-1, bucketCols=[], sortCols=[],
                                    parameters={})


def _fields(columns: list[dict[str, str]]) -> list[ttypes.FieldSchema]:
    return [ttypes.FieldSchema(name=c["Name"], type=c["Type"]) for c in columns]


def _table_input(table: ttypes.Table) -> dict[str, Any]:
    """The metastore's Table in Glue's shape, to compare with what `TableEntry` wants."""
    sd, serde = table.sd, table.sd.serdeInfo
    return {"Parameters": table.parameters or {}, "PartitionKeys": _columns(table.partitionKeys),
            "StorageDescriptor": {"Columns": _columns(sd.cols), "Location": sd.location,
                                  "InputFormat": sd.inputFormat, "OutputFormat": sd.outputFormat,
                                  "SerdeInfo": {"SerializationLibrary": serde.serializationLib,
                                                "Parameters": serde.parameters or {}}}}


def _columns(fields: list[ttypes.FieldSchema] | None) -> list[dict[str, str]]:
    return [{"Name": f.name, "Type": f.type} for f in fields or []]


def _said(exc: Exception) -> str:
    """What went wrong, in one line: the socket's error under Thrift's, the metastore's message."""
    return " ".join(str(getattr(exc, "inner", None) or getattr(exc, "message", None) or exc).split())
