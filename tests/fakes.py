"""In-memory fakes of both jobs' ports: the loader's (changelog, object store, reader, the one
in-memory target, ledger; a loader built over them) and the poll loop's (S3 bodies, changelog,
journaling queue)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from lakeinlet.errors import CommitConflict, TerminalError, TransientError
from lakeinlet.events import ReceivedEvent
from lakeinlet.incremental.loader import Loader
from lakeinlet.incremental.model import (
    FINAL,
    LOAD,
    REMOVE,
    RESET,
    ChangeRow,
    Checkpoint,
    Outcome,
    PlannedObject,
    Position,
    TargetCommit,
)
from lakeinlet.incremental.plan import Caps, rows_from_records
from lakeinlet.incremental.ports import Compaction, Load, ObjectHead, ReadBatch, Removal
from lakeinlet.incremental.targets.commits import (
    batches_after,
    checkpoint_from,
    load_meta,
    newest_watermark,
    position_meta,
    removal_outcomes,
    replaced_outcomes,
    replacing,
)
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import PollerSettings
from lakeinlet.sources.ports import EntryFailure

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass
class FakeChangelog:
    versions: list[list[dict[str, Any]]] = field(default_factory=list)

    def add(self, *keys: str) -> None:
        """One changelog version; a key written `-k` is an ObjectRemoved event for `k`, `k#2`
        the creation of a second version of `k` (etag `etag-k#2`)."""
        v = len(self.versions)
        self.versions.append([self._row(v, i, k.lstrip("-"), k.startswith("-")) for i, k in enumerate(keys)])

    @staticmethod
    def _row(v: int, i: int, key: str, removed: bool) -> dict[str, Any]:
        name = key.partition("#")[0]
        return {"_commit_version": v, "event_id": f"{key}-{v}-{removed}", "bucket": "b", "key": name,
                "event_time": T0 + timedelta(seconds=i), "version_id": None, "sequencer": None,
                "event_name": "ObjectRemoved:Delete" if removed else "ObjectCreated:Put",
                "size": None if removed else 10, "etag": f"etag-{key}"}

    def head_version(self) -> int:
        return len(self.versions) - 1

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        recs = [r for v in self.versions[start.complete + 1:] for r in v]
        rows = rows_from_records(recs)
        return rows, dict(Counter(r.commit_version for r in rows))


@dataclass
class FakeStore:
    objects: dict[str, int]

    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead | None]:
        """Each object is as its event saw it (the fakes never overwrite between event and HEAD)."""
        return {(o.bucket, o.key): (ObjectHead(self.objects[o.key], o.etag or "")
                                    if o.key in self.objects else None) for o in objs}

    def list(self, bucket: str, prefix: str) -> Any:
        return iter(())


class FakeReader:
    """Reads each object as one row: its lineage columns, as the real reader adds them."""

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any,
             heads: Any = None, single_pass: bool = False) -> ReadBatch:
        rows = [{"_source_bucket": o.bucket, "_source_key": o.key, "_source_etag": o.etag,
                 "_source_event_time": o.event_time, "_ingest_batch": batch_id} for o in objs]
        return ReadBatch(rows, None, {(o.bucket, o.key): 1 for o in objs}, {}, {})


@dataclass
class FakeLedger:
    rows: list[tuple[int, Outcome]] = field(default_factory=list)

    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]:
        """Final refs, unless a later removal of the same key deleted their rows."""
        removed = {(o.obj.bucket, o.obj.key): v for v, o in self.rows if o.status == "removed"}
        refs = {o.obj.ref for v, o in self.rows if o.status in FINAL
                and v > removed.get((o.obj.bucket, o.obj.key), -1)}
        return {o.ref for o in objs if o.ref in refs}

    def identical(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str, str], str]:
        """As the Delta ledger: the newest loaded version's ETag, unless a later removal came."""
        removed = {(o.obj.bucket, o.obj.key): v for v, o in self.rows if o.status == "removed"}
        newest = {(o.obj.bucket, o.obj.key): o.obj for v, o in sorted(self.rows, key=lambda r: r[0])
                  if o.status == "loaded" and v > removed.get((o.obj.bucket, o.obj.key), -1)}
        return {o.ref: n.identity for o in objs if (n := newest.get((o.bucket, o.key))) is not None
                and o.etag and (n.etag or "").strip('"') == o.etag.strip('"') and n.identity != o.identity}

    def loaded_times(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], datetime]:
        newest: dict[tuple[str, str], Outcome] = {}
        for _, o in self.rows:
            if o.status in ("loaded", "removed"):
                newest[(o.obj.bucket, o.obj.key)] = o
        return {(o.bucket, o.key): n.obj.event_time for o in objs
                if (n := newest.get((o.bucket, o.key))) is not None and n.status == "loaded"}

    def last_target_version(self) -> int:
        return max((v for v, _ in self.rows), default=-1)

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None:
        if target_version > self.last_target_version():
            self.rows += [(target_version, o) for o in outcomes]


def make(changelog: FakeChangelog, target: MemoryTarget, ledger: FakeLedger, **kw: Any) -> Loader:
    store = FakeStore({k: 10 for k in "abcdefg"} | {"empty": 0})
    return Loader(**{"changelog": changelog, "store": store, "reader": FakeReader, "target": target,
                      "ledger": ledger, "caps": Caps(2, 10**6)} | kw)


def loaded_rows(target: MemoryTarget) -> Counter[str]:
    """Rows in the target per object key: one per load (`FakeReader`) still there, a removal or a
    replacing load having deleted the key's earlier rows."""
    return Counter(r["_source_key"] for r in target.table or [])


@dataclass
class MemoryStaged:
    outcomes: list[Outcome]
    start: Position
    meta: dict[str, str]
    rows: list[dict[str, Any]]
    delete: set[tuple[str, str]]

    def discard(self) -> None:
        self.rows = []


@dataclass
class MemoryTarget:
    """A target table in memory with every role of a real adapter: rows as dicts, commits with
    lakeinlet's metadata codec. The loader's unit tests stand on it, and the target contract
    (tests/spark/test_target_contract.py) holds it to the Delta, Hudi and Iceberg adapters' behaviour."""

    uri: str = "memory://orders"
    app_id: str = "lakeinlet-loader"
    table: list[dict[str, Any]] | None = None
    history: list[TargetCommit] = field(default_factory=list)
    stages_rows = True
    stamp: Mapping[str, str] = field(default_factory=dict)

    def checkpoint(self) -> Checkpoint:
        return checkpoint_from(self.commits(), self.app_id, len(self.history) - 1)

    def schema(self) -> Any:
        return None

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        return list(reversed(self.history))[:limit]

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        return batches_after(self.commits(), self.app_id, target_version)

    def rows(self, columns: Sequence[str] | None = None) -> Any:
        if self.table is None:
            raise FileNotFoundError(f"{self.uri}: no table there (yet)")
        import pyarrow as pa

        return pa.Table.from_pylist([{c: r[c] for c in columns} if columns else r for r in self.table])

    def stage(self, change: Load | Removal, start: Position, end: Position, batch_id: str) -> MemoryStaged:
        if isinstance(change, Removal):
            gone = {(o.bucket, o.key) for o in change.objs}
            outcomes = removal_outcomes(change.objs, change.decided, self._counts(gone))
            meta = load_meta(self.app_id, batch_id, start, end, outcomes, REMOVE,
                             previous=newest_watermark(self.commits, self.app_id), stamp=self.stamp)
            return MemoryStaged(outcomes, start, meta, [], gone)
        earlier = {(o.bucket, o.key) for o in replacing(change.outcomes, change.replace)}
        outcomes = replaced_outcomes(change.outcomes, self._counts(earlier))
        meta = load_meta(self.app_id, batch_id, start, end, outcomes,
                         previous=newest_watermark(self.commits, self.app_id), stamp=self.stamp)
        return MemoryStaged(outcomes, start, meta, list(change.batch.data or []), earlier)

    def publish(self, staged: MemoryStaged) -> int:
        if (self.checkpoint().position or Position(-1)) != staged.start:
            raise CommitConflict(f"checkpoint of {self.uri} moved from {staged.start}")
        kept = [r for r in self.table or [] if (r["_source_bucket"], r["_source_key"]) not in staged.delete]
        self.table = kept + staged.rows
        return self._commit(staged.meta)

    def commit_position(self, start: Position | None, to: Position, reason: str,
                        operation: str = RESET) -> int:
        self.table = self.table if self.table is not None else []
        return self._commit(position_meta(self.app_id, start, to, reason, operation,
                                          previous=newest_watermark(self.commits, self.app_id),
                                          stamp=self.stamp))

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        return []

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        """Each load since the last compaction is one small file; two or more merge into one, in
        a commit that is not the loader's (no app id, no checkpoint)."""
        if self.table is None:
            raise TerminalError(f"{self.uri}: no table there yet: nothing to compact")
        files, size = self._files(), 10 * len(self.table)
        if files < 2 or dry_run:
            return Compaction(files, size, min(files, 1), size, files if files > 1 else 0)
        return Compaction(files, size, 1, size, files, self._commit({"operation": "compact"}), "in memory")

    def _files(self) -> int:
        files = 0
        for c in self.history:
            loads = c.is_ours(self.app_id) and c.operation == LOAD
            files = 1 if c.operation == "compact" else files + loads
        return files

    def release(self) -> None:
        pass

    def _commit(self, meta: dict[str, str]) -> int:
        self.history.append(TargetCommit(len(self.history), datetime.now(UTC), meta))
        return len(self.history) - 1

    def _counts(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], int]:
        found: Counter[tuple[str, str]] = Counter()
        for r in self.table or []:
            if (r["_source_bucket"], r["_source_key"]) in keys:
                found[(r["_source_bucket"], r["_source_key"])] += 1
        return dict(found)


# ---- the poll loop's fakes ----------------------------------------------------------------------

EVENTS = Path(__file__).parent / "data" / "events"
TEMPLATE = json.loads((EVENTS / "s3_put.json").read_text())


def s3_body(key: str, bucket: str = "landing-bucket") -> str:
    """The s3_put.json fixture with another key (quote_plus-encoded, as S3 sends it) and bucket."""
    doc = json.loads(json.dumps(TEMPLATE))
    doc["Records"][0]["s3"]["object"]["key"] = quote_plus(key, safe="/")
    doc["Records"][0]["s3"]["bucket"]["name"] = bucket
    doc["Records"][0]["s3"]["object"]["eTag"] = f"etag-{key}"
    doc["Records"][0]["s3"]["object"].pop("versionId")
    doc["Records"][0]["s3"]["object"].pop("sequencer")
    return json.dumps(doc)


class MemoryChangelog:
    """An in-memory changelog that records the order of operations in a shared journal."""

    def __init__(self, journal: list[tuple[str, object]] | None = None, fail: int = 0) -> None:
        self.commits: list[tuple[list[ReceivedEvent], dict[str, str]]] = []
        self.journal = journal if journal is not None else []
        self.fail = fail

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        if self.fail:
            self.fail -= 1
            raise TransientError("changelog commit failed (injected)")
        self.commits.append((list(rows), metadata))
        self.journal.append(("commit", {r.message_id for r in rows}))
        return len(self.commits) - 1

    @property
    def rows(self) -> list[ReceivedEvent]:
        return [r for rows, _ in self.commits for r in rows]


class JournalQueue(InMemoryQueue):
    """The in-memory queue, journaling deletes by message id (handles start with the id)."""

    def __init__(self, journal: list[tuple[str, object]], **kw: object) -> None:
        super().__init__(**kw)
        self.journal = journal

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.journal.append(("delete", {h.split(".")[0] for h in receipt_handles}))
        return super().delete(receipt_handles)


def settings(**kw: object) -> PollerSettings:
    base: dict[str, object] = {"wait_seconds": 0, "visibility_timeout": 30, "receivers": 2,
                               "batch_size": 10, "batch_seconds": 5.0, "until_empty": True}
    return PollerSettings(**(base | kw))
