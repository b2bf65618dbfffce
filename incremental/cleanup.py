"""Source cleanup after load (Auto Loader's `cleanSource`): archive or delete the source objects the
ledger records `loaded`, each version once, over narrow ports; a crash at any step is resumed by the
next pass, which never copies an archive twice nor deletes a version that was not loaded."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.incremental.archived import IDENTITY_META
from lakeinlet.incremental.cleanup_guard import Guard
from lakeinlet.incremental.cleanup_ports import (
    ARCHIVED,
    CHANGED,
    DELETED,
    GONE,
    SKIPPED,
    CleanupLog,
    CleanupRecord,
    Loaded,
    LoadedLedger,
    SourceCleaner,
    SourceHead,
)
from lakeinlet.incremental.model import LOADED, REMOVED
from lakeinlet.logs import event

__all__ = [  # the ports' names, re-exported: `from lakeinlet.incremental.cleanup import X` keeps working
    "ARCHIVED", "CHANGED", "DELETED", "GONE", "IDENTITY_META", "SKIPPED", "AfterLoad", "Cleanup",
    "CleanupLog", "CleanupRecord", "CleanupReport", "Loaded", "LoadedLedger", "SourceCleaner", "SourceHead"]
log = logging.getLogger(__name__)
OFF, DELETE, ARCHIVE = "off", "delete", "archive"
CHUNK = 100
"""Objects between two records of a pass (and its progress lines): what a crash makes the next redo."""


@dataclass(frozen=True)
class AfterLoad:
    """`--after-load`: `off`, `delete`, or `archive:s3://BUCKET/PREFIX` (copies to
    `PREFIX<source bucket>/<source key>`: one archive serves several source buckets)."""

    action: str = OFF
    bucket: str = ""
    prefix: str = ""

    @classmethod
    def parse(cls, text: str) -> AfterLoad:
        """Raises ValueError naming what was expected."""
        if text in (OFF, DELETE):
            return cls(text)
        uri = text.removeprefix(ARCHIVE + ":")
        bucket, _, prefix = uri.removeprefix("s3://").partition("/")
        if uri == text or not uri.startswith("s3://") or not bucket:
            raise ValueError("--after-load: expected off, delete or archive:s3://BUCKET/PREFIX, "
                             f"found {text!r}")
        return cls(ARCHIVE, bucket, prefix.strip("/") + "/" if prefix.strip("/") else "")

    @property
    def enabled(self) -> bool:
        return self.action != OFF

    def destination(self, bucket: str, key: str) -> tuple[str, str] | None:
        """Where the archive of s3://bucket/key goes (None: no archive)."""
        return (self.bucket, f"{self.prefix}{bucket}/{key}") if self.action == ARCHIVE else None



@dataclass
class CleanupReport:
    """What one pass did (or, dry, would do)."""

    dry_run: bool = False
    done: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    """Loaded versions never cleaned up, by why (no record is written for them)."""
    waiting: int = 0
    left: int = 0
    failed: int = 0

    def lines(self) -> list[str]:
        verb = "would be " if self.dry_run else ""
        out = [f"{verb}archived {self.done[ARCHIVED]}, {verb}deleted {self.done[DELETED]}, "
               f"skipped {sum(self.skipped.values())}, waiting for the retention {self.waiting}, "
               f"left for the next pass {self.left}, failed {self.failed} (retried by the next pass)"]
        out += [f"  skipped {n}: {why}" for why, n in sorted(self.skipped.items())]
        out += [f"  kept {n}: {why}" for why, n in sorted(self.kept.items())]
        return out

    def count(self, records: Sequence[CleanupRecord]) -> None:
        for r in records:
            if r.status == SKIPPED:
                self.skipped[_short(r.reason)] += 1
            else:
                self.done[r.status] += 1


@dataclass
class Cleanup:
    """One pass over the loaded versions no record settles yet, oldest load first."""

    spec: AfterLoad
    ledger: LoadedLedger
    record: CleanupLog
    store: SourceCleaner
    retention_hours: float
    max_objects: int
    loads: Callable[[str], bool] = lambda key: False
    """Whether this run's loader loads a key: an archive it would load again is refused."""
    loads_from: Callable[[str], bool] = lambda bucket: False
    """Whether this run's loader loads objects of a bucket (any, without --bucket): an archive in
    another bucket it loads from is refused as one in the source bucket is."""
    shared: Callable[[str], str | None] = lambda key: None
    """The other route that loads a key too, if any: its object is kept for that route."""
    threads: int = 8
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    guard: Guard = field(default_factory=Guard)

    def run(self, dry_run: bool = False, stopped: Callable[[], bool] = lambda: False) -> CleanupReport:
        """One pass (`stopped()` is asked between chunks: the rest waits for the next pass).

        Raises:
            TerminalError: the configuration or the credentials forbid the cleanup (the records
                of what was done before are written first).
        """
        report, pass_id = CleanupReport(dry_run), uuid.uuid4().hex[:12]
        floor = self.record.floor()
        rows = self.ledger.rows_after_version(floor)
        todo, blocked = self._candidates(rows, self.record.settled(floor), report)
        self._check_archive(todo)
        report.left = max(0, len(todo) - self.max_objects)
        blocked += [c.target_version for c in todo[self.max_objects:]]
        todo = todo[:self.max_objects]
        if todo and not dry_run:
            self.guard.check_store(self.store, todo[0].bucket, self.spec.action)
        top = max((r["target_version"] for r in rows), default=floor)
        for start in range(0, len(todo), CHUNK):
            if stopped():
                report.left += len(todo) - start
                break
            records, failed, terminal = self._settle_all(todo[start:start + CHUNK], dry_run)
            report.count(records)
            report.failed += len(failed)
            blocked += failed
            rest = [c.target_version for c in todo[start + CHUNK:]]
            if not dry_run:  # every loaded version through the floor is settled (or kept for good)
                self.record.append(records, max(floor, min([*blocked, *rest], default=top + 1) - 1), pass_id)
            if terminal is not None:
                raise terminal
            event(log, "cleanup progress", done=min(start + CHUNK, len(todo)), of=len(todo),
                  failed=report.failed, dry_run=dry_run)
        return report

    def backlog(self) -> CleanupReport:
        """What the next pass would find, counted from the ledger and the cleanup log alone (no
        request to the source): `left` loaded objects due now, `waiting` for the retention."""
        report, floor = CleanupReport(dry_run=True), self.record.floor()
        todo, _ = self._candidates(self.ledger.rows_after_version(floor), self.record.settled(floor), report)
        report.left = len(todo)
        return report

    def _candidates(self, rows: Sequence[dict[str, Any]], settled: set[tuple[str, str, str]],
                    report: CleanupReport) -> tuple[list[Loaded], list[int]]:
        """The loaded versions to settle now, oldest load first, and the target versions of those
        still waiting for the retention (the floor stays below them)."""
        removed: dict[tuple[str, str], int] = {}
        for r in (r for r in rows if r["status"] == REMOVED):
            where = (r["bucket"], r["key"])
            removed[where] = max(r["target_version"], removed.get(where, -1))
        cutoff = self.clock() - timedelta(hours=self.retention_hours)
        todo: dict[tuple[str, str, str], Loaded] = {}
        waiting: list[int] = []
        for r in sorted((r for r in rows if r["status"] == LOADED), key=lambda r: r["target_version"]):
            obj = _loaded(r)
            if obj.ref in settled or obj.ref in todo:
                continue
            if why := _kept(r, removed):
                report.kept[why] += 1
            elif obj.loaded_at > cutoff:
                report.waiting += 1
                waiting.append(obj.target_version)
            else:
                todo[obj.ref] = obj
        return list(todo.values()), waiting

    def _check_archive(self, objs: Sequence[Loaded]) -> None:
        """Refuse an archive under keys this loader loads, in a source bucket or in another bucket
        it loads from: each archived copy would be announced, loaded again, and archived again."""
        for obj in objs:
            dest = self.spec.destination(obj.bucket, obj.key)
            if dest is None or not self.loads(dest[1]):
                continue
            if dest[0] == obj.bucket or self.loads_from(dest[0]):
                raise TerminalError(
                    f"--after-load archive:s3://{dest[0]}/{self.spec.prefix}: the archive "
                    f"s3://{dest[0]}/{dest[1]} is a key this loader loads, so each archived copy "
                    "would be loaded again: archive to a bucket or prefix it does not load (name the "
                    f"source buckets with --bucket), or add --ignore-prefix {self.spec.prefix or dest[1]}")

    def _settle_all(self, objs: Sequence[Loaded], dry_run: bool
                    ) -> tuple[list[CleanupRecord], list[int], TerminalError | None]:
        """Settle `objs` in parallel: their records, the target versions of those that failed for
        a transient reason (left to the next pass), and a terminal error that stops the pass."""
        def one(obj: Loaded) -> CleanupRecord | Exception:
            try:
                return self._settle(obj, dry_run)
            except (TransientError, TerminalError) as exc:
                return exc

        with ThreadPoolExecutor(self.threads, thread_name_prefix="cleanup") as pool:
            results = list(pool.map(one, objs))
        failed = [(o, r) for o, r in zip(objs, results, strict=True) if isinstance(r, Exception)]
        for obj, exc in failed:
            event(log, "cleanup failed", level=logging.WARNING, object=f"s3://{obj.bucket}/{obj.key}",
                  error=str(exc)[:300])
        terminal = next((r for r in results if isinstance(r, TerminalError)), None)
        return ([r for r in results if isinstance(r, CleanupRecord)], [o.target_version for o, _ in failed],
                terminal)

    def _settle(self, obj: Loaded, dry_run: bool) -> CleanupRecord:
        """Archive (copy, then delete) or delete one loaded version, or say why it is skipped;
        each step checks what an earlier, interrupted pass already did."""
        if why := self.guard.refuse(obj.bucket, obj.key):
            return self._skip(obj, f"never cleaned up: {why}")
        if other := self.shared(obj.key):
            return self._skip(obj, f"route {other} loads this key too: kept for it")
        dest = self.spec.destination(obj.bucket, obj.key)
        head = self.store.head(obj.bucket, obj.key)
        if head is None:
            return self._gone(obj, dest)
        same = obj.same_version(head)
        if same is None or head.etag is None:
            return self._skip(obj, "the load recorded no version id or etag: the current object "
                                   "cannot be told to be the version loaded")
        if not same:
            return self._skip(obj, "overwritten since the load (a newer version is there: its own "
                                   "load is cleaned up after it)")
        if dry_run:
            return self._done(obj, dest)
        if dest is not None:
            found = self.store.head(*dest)
            if found is None or found.archive_of != obj.identity:  # else copied by an interrupted pass
                self.store.copy(obj, head, *dest)
        if self.store.delete(obj.bucket, obj.key, head.etag, head.version_id) == CHANGED:
            return self._skip(obj, "overwritten while it was cleaned up: the newer version is kept")
        return self._done(obj, dest)

    def _gone(self, obj: Loaded, dest: tuple[str, str] | None) -> CleanupRecord:
        """The source is gone: deleted by an earlier pass that died before its record, or by someone else."""
        if dest is None:
            return self._done(obj, dest, "the source was gone already")
        found = self.store.head(*dest)
        if found is not None and found.archive_of == obj.identity:
            return self._done(obj, dest, "the source was gone already; its archive is there")
        return self._skip(obj, "the source was gone before its cleanup, with no archive of this version")

    def _done(self, obj: Loaded, dest: tuple[str, str] | None, reason: str = "") -> CleanupRecord:
        where = f"s3://{dest[0]}/{dest[1]}" if dest else None
        return CleanupRecord(obj, self.spec.action, ARCHIVED if dest else DELETED, reason, where)

    def _skip(self, obj: Loaded, reason: str) -> CleanupRecord:
        return CleanupRecord(obj, self.spec.action, SKIPPED, reason)


def _loaded(r: Mapping[str, Any]) -> Loaded:
    at = r["loaded_at"]
    return Loaded(r["bucket"], r["key"], r["identity"], r["etag"], r["version_id"], int(r["target_version"]),
                  at if at.tzinfo else at.replace(tzinfo=UTC))


def _kept(r: Mapping[str, Any], removed: Mapping[tuple[str, str], int]) -> str | None:
    """Why a loaded version is never cleaned up, if it is not."""
    if r["bad_records"]:
        return "loaded with malformed records (kept in the quarantine table): the source stays for a reload"
    if removed.get((r["bucket"], r["key"]), -1) >= r["target_version"]:
        return "its rows were removed after the load (an ObjectRemoved event)"
    return None


def _short(reason: str) -> str:
    return reason.partition(" (")[0].partition(":")[0]

