"""The compaction's commit, written as Delta writes an OPTIMIZE: `remove` and `add` actions with
dataChange=false, the loader's `txn` as it stands, one `_delta_log` version put if absent (the
primitive delta-rs commits with, so both writers share the log). Removed files are `DataFile`s too
(their modification time and stats unused)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote

from deltalake import DeltaTable

from lakeinlet import __version__
from lakeinlet.changelog.blind_append import log_path as commit_path
from lakeinlet.changelog.log_store import LogStore
from lakeinlet.incremental.targets.delta.files import DataFile

OPERATION = "OPTIMIZE"
"""What Delta calls a rewrite that changes no row (delta-spark and delta-rs label theirs so)."""
KNOWN_WRITER_FEATURES = frozenset({
    "appendOnly", "invariants", "checkConstraints", "generatedColumns", "changeDataFeed",
    "identityColumns", "timestampNtz", "vacuumProtocolCheck", "domainMetadata", "columnMapping"})
"""Writer features a data-preserving rewrite may commit under (columnMapping only in mode none);
others (deletion vectors, row tracking, in-commit timestamps, clustering) need more than this."""
PATH_SAFE = "/=:@!$&'()*+,;-._~"
"""Characters a Delta log path keeps as they are (RFC 3986 path characters); others are %XX."""


def log_path(storage_path: str) -> str:
    """A data file's path as the Delta log holds it (URI-encoded, as delta-rs and Spark write it)."""
    return quote(storage_path, safe=PATH_SAFE)


def storage_path(logged: str) -> str:
    """A data file's path on storage from its Delta log form."""
    return unquote(logged)


def unwritable(dt: DeltaTable) -> str | None:
    """Why a hand-written rewrite commit would break this table's protocol (None: it would not)."""
    protocol = dt.protocol()
    mapping = dt.metadata().configuration.get("delta.columnMapping.mode", "none")
    if mapping != "none":
        return f"column mapping mode {mapping!r} (files name columns by physical name)"
    if protocol.min_writer_version <= 6:
        return None
    extra = sorted(set(protocol.writer_features or []) - KNOWN_WRITER_FEATURES)
    return f"writer feature(s) {', '.join(extra)}" if extra else None


def commit_body(version_read: int, removed: Sequence[DataFile], added: Sequence[DataFile],
                txn: tuple[str, int] | None, parameters: Mapping[str, str],
                custom: Mapping[str, str], commit_id: str, now_ms: int | None = None) -> bytes:
    """The newline-delimited actions of one compaction commit (`commit_id` tells it apart)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    metrics = {"numRemovedFiles": len(removed), "numAddedFiles": len(added),
               "numRemovedBytes": sum(f.size for f in removed), "numAddedBytes": sum(f.size for f in added)}
    info: dict[str, Any] = {
        "timestamp": now, "operation": OPERATION, "operationParameters": dict(parameters),
        "readVersion": version_read, "isolationLevel": "SnapshotIsolation", "isBlindAppend": False,
        "operationMetrics": {k: str(v) for k, v in metrics.items()},
        "engineInfo": f"lakeinlet:{__version__}", "clientVersion": f"lakeinlet-{__version__}",
        "txnId": commit_id, **custom}
    actions: list[dict[str, Any]] = [{"commitInfo": info}]
    if txn is not None:
        actions.append({"txn": {"appId": txn[0], "version": txn[1], "lastUpdated": now}})
    actions += [{"remove": {"path": log_path(f.path), "deletionTimestamp": now, "dataChange": False,
                            "extendedFileMetadata": True, "partitionValues": dict(f.partition_values),
                            "size": f.size}} for f in removed]
    actions += [{"add": {"path": log_path(f.path), "partitionValues": dict(f.partition_values),
                         "size": f.size, "modificationTime": f.modification_time, "dataChange": False,
                         "stats": f.stats}} for f in added]
    return "\n".join(json.dumps(a, separators=(",", ":")) for a in actions).encode()


def put(store: LogStore, version: int, body: bytes, commit_id: str) -> bool:
    """Commit `body` as `version`; False when another writer took that version first. A PUT
    retried after its first try landed finds its own commit there: that is a commit made."""
    path = commit_path(version)
    return store.put_if_absent(path, body) or f'"txnId":"{commit_id}"'.encode() in (store.get(path) or b"")
