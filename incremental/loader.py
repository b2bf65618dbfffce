"""Orchestration of one batch and of a drain over the ports: plan → HEAD → read → stage → check
→ publish (rows + checkpoint, atomic) → quarantine and ledger. A crash anywhere is recovered by
rerunning: nothing is visible before the publish, and the ledger is repaired from the target after it.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.heads import head_outcome
from lakeinlet.incremental.model import (
    FINAL,
    LOADED,
    REMOVED,
    START,
    LoadPlan,
    Outcome,
    PlannedObject,
    Position,
    Ref,
)
from lakeinlet.incremental.plan import Caps, Filters, KeyFilter, plan_batch
from lakeinlet.incremental.ports import (
    NOTHING_READ,
    ChangelogPort,
    LedgerPort,
    Load,
    ObjectHead,
    ObjectStorePort,
    QuarantinePort,
    ReadBatch,
    ReaderPort,
    Removal,
    TargetPort,
)
from lakeinlet.incremental.removals import judge
from lakeinlet.incremental.reports import BatchReport, Summary
from lakeinlet.logs import event

log = logging.getLogger(__name__)
MAX_CONFLICTS = 20
"""Batches in a row a drain may lose to other loaders' commits before it gives up."""


@dataclass
class Loader:
    """Loads changelog rows into the target, one atomic commit per batch."""

    changelog: ChangelogPort
    store: ObjectStorePort
    reader: Callable[[], ReaderPort]
    target: TargetPort[Any]
    ledger: LedgerPort
    caps: Caps
    filters: KeyFilter = field(default_factory=Filters)
    quarantine: QuarantinePort | None = None
    on_missing_checkpoint: str = "earliest"
    hold: Callable[[], AbstractContextManager[None]] = nullcontext
    """What a run holds while it writes (a writer lease, for formats that need one)."""
    clock: Callable[[], float] = time.monotonic
    _writing: bool = field(default=False, init=False, repr=False)
    _head_version: int = field(default=-1, init=False, repr=False)
    _pending: list[tuple[int, str, list[Outcome]]] = field(default_factory=list, init=False, repr=False)

    def start(self) -> Position:
        """The checkpoint, or the first-run position the strategy picks. `latest` is resolved
        once and recorded in the target (a commit without rows), so events that arrive after
        the first run are loaded by the next."""
        checkpoint = self.target.checkpoint()
        self._head_version = checkpoint.target_version
        if checkpoint.position is not None:
            return checkpoint.position
        if self.on_missing_checkpoint == "fail":
            raise TerminalError("the target has no checkpoint and --on-missing-checkpoint is fail: "
                                "pass --on-missing-checkpoint earliest (load the whole changelog) or "
                                "latest (start after its head)")
        if self.on_missing_checkpoint == "latest":
            head = Position(self.changelog.head_version())
            self.target.commit_position(None, head, "first run: --on-missing-checkpoint latest", START)
            event(log, "start", position=str(head), reason="--on-missing-checkpoint latest")
            return head
        return Position(-1)

    def plan(self, start: Position) -> LoadPlan:
        rows, sizes = self.changelog.rows_after(start, self.caps.max_files)
        return plan_batch(rows, start, self.caps, self.filters, sizes, self._known, self.ledger.identical)

    def run_batch(self) -> BatchReport | None:
        """Plan, read, commit and record one batch; None when the changelog is caught up.

        Raises:
            CommitConflict: another loader committed first (nothing of this batch is visible).
        """
        if not self._writing:
            with self._held():
                return self._batch()
        return self._batch()

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """What this loader holds while it writes (once per run; see `hold`)."""
        with self.hold():
            self._writing = True
            try:
                yield
            finally:
                self._writing = False

    def _batch(self) -> BatchReport | None:
        t0, seconds = self.clock(), {}
        start = self.start()
        self._catch_up()
        plan = self.plan(start)
        if plan.empty:
            return None
        batch_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        seconds["plan"] = self.clock() - t0
        if plan.removals:
            return self._remove(plan, start, batch_id, seconds, t0)
        readable, decided, heads = self._check(plan)
        earlier = self._earlier(readable)
        one_pass, staged_quarantine = self.target.stages_rows, False
        while True:
            batch = self.reader().read(readable, batch_id, self.target.schema(), heads,
                                       single_pass=one_pass) if readable else NOTHING_READ
            seconds.setdefault("read", self.clock() - t0 - seconds["plan"])
            outcomes = [*plan.decided, *decided, *_read_outcomes(readable, batch)]
            try:
                if self.quarantine is not None and batch.malformed is not None:
                    self.quarantine.stage(batch.malformed, batch_id)
                    staged_quarantine = True
                staged = self.target.stage(Load(batch, outcomes, earlier), start, plan.end, batch_id)
                if (why := batch.problem()) is None:
                    version = self.target.publish(staged)
                    break
                staged.discard()  # the one-pass write found something: read again, checking first
                event(log, "reread", level=logging.INFO, batch_id=batch_id, reason=why)
                one_pass, batch_id = False, f"{batch_id}-checked"
            finally:
                batch.release()
        seconds["commit"] = self.clock() - t0 - sum(seconds.values())
        self._record(staged.outcomes, version, batch_id, staged_quarantine)
        seconds["total"] = self.clock() - t0
        return BatchReport(batch_id, plan, version, tuple(staged.outcomes), seconds)

    def _remove(self, plan: LoadPlan, start: Position, batch_id: str, seconds: dict[str, float],
                t0: float) -> BatchReport:
        """A batch of removal events: delete their rows with the checkpoint, in one commit; a removal
        that the key's HEAD or the version loaded contradicts removes nothing (`removals.judge`)."""
        heads = self.store.head_many(plan.removals)
        removals, kept = judge(plan.removals, heads, self._loaded(plan.removals))
        staged = self.target.stage(Removal(removals, (*plan.decided, *kept)), start, plan.end, batch_id)
        version = self.target.publish(staged)
        seconds["commit"] = self.clock() - t0 - sum(seconds.values())
        self._append_ledger(staged.outcomes, version, batch_id)
        seconds["total"] = self.clock() - t0
        return BatchReport(batch_id, plan, version, tuple(staged.outcomes), seconds)

    def _record(self, outcomes: Sequence[Outcome], version: int, batch_id: str, staged: bool) -> None:
        """After the commit: the quarantine's staged records, then the ledger (both idempotent
        per target version, and repaired from the target's history after a crash). A batch
        that staged nothing and has no malformed records skips the quarantine (an empty commit
        there would add to every batch's fixed cost: `bench/loader_throughput.py` prints it), as
        `repair` does."""
        if self.quarantine is not None and (staged or any(o.bad_records for o in outcomes)):
            self.quarantine.commit(batch_id, version)
        self._append_ledger(outcomes, version, batch_id)

    def _check(self, plan: LoadPlan) -> tuple[list[PlannedObject], list[Outcome], dict[Ref, ObjectHead]]:
        """HEAD every object to read: gone, empty, too large or overwritten ones are decided."""
        heads = self.store.head_many(plan.to_read) if plan.to_read else {}
        readable, decided = [], []
        for obj in plan.to_read:
            outcome = head_outcome(obj, heads.get((obj.bucket, obj.key)), self.caps.max_bytes)
            if outcome is None:
                readable.append(obj)
            else:
                decided.append(outcome)
        return readable, decided, {k: h for k, h in heads.items() if isinstance(h, ObjectHead)}

    def _earlier(self, objs: Sequence[PlannedObject]) -> list[PlannedObject]:
        """With --on-overwrite replace: the objects to read of which an earlier version's rows
        are in the target."""
        if not self.caps.replace_overwritten or not objs:
            return []
        loaded = self._loaded(objs)
        return [o for o in objs if (o.bucket, o.key) in loaded]

    def _loaded(self, objs: Sequence[PlannedObject]) -> dict[Ref, datetime]:
        """The keys of `objs` with a loaded version's rows in the target, each with that version's
        event time (the ledger's, with the pending commits' outcomes on top)."""
        times = self.ledger.loaded_times(objs)
        for _, _, outcomes in self._pending:  # oldest first, as in `_known`
            for o in outcomes:
                if o.status == REMOVED:
                    times.pop((o.obj.bucket, o.obj.key), None)
                elif o.status == LOADED:
                    times[(o.obj.bucket, o.obj.key)] = o.obj.event_time
        return times

    def _catch_up(self) -> None:
        """Before planning: the target commits up to the checkpoint this batch starts from that
        the ledger does not hold yet (another loader committed and has not appended its ledger
        rows, or died first). Planning counts their objects as known, or a duplicate
        notification of one would load again; they are written to the ledger with ours
        (`_append_ledger`), not here, so two loaders do not both record one commit."""
        watermark = self.ledger.last_target_version()
        self._pending = self.target.batches_after(watermark) if self._head_version > watermark else []

    def _known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]:
        """The ledger's known refs among `objs`, with the pending commits' outcomes on top."""
        refs = self.ledger.known(objs)
        for _, _, outcomes in self._pending:  # oldest first: a later removal unloads a key
            for o in outcomes:
                if o.status == REMOVED:
                    refs = {r for r in refs if r[:2] != (o.obj.bucket, o.obj.key)}
                elif o.status in FINAL:
                    refs.add(o.obj.ref)
        return {o.ref for o in objs if o.ref in refs}

    def _append_ledger(self, outcomes: Sequence[Outcome], version: int, batch_id: str) -> None:
        """Our batch's ledger rows; when an earlier target commit is still unrecorded (its
        loader died before its ledger append), the ledger is repaired from the target first,
        which records ours too: the ledger never moves past a commit it does not hold."""
        if self._pending and self.ledger.last_target_version() < self._head_version:
            self.repair()
        self.ledger.append(outcomes, version, batch_id)  # a no-op when repair recorded it

    def repair(self) -> int:
        """Record the target commits a crashed run left unrecorded (quarantine, then ledger: a
        batch in the ledger has its quarantine records committed). Returns how many."""
        batches = self.target.batches_after(self.ledger.last_target_version())
        for version, batch_id, outcomes in batches:
            if self.quarantine is not None and any(o.bad_records for o in outcomes):
                self.quarantine.commit(batch_id, version)
            self.ledger.append(outcomes, version, batch_id)
        return len(batches)

    def drain(self, max_batches: int = 0, progress: Callable[[BatchReport], None] | None = None,
              stopped: Callable[[], bool] = lambda: False) -> Summary:
        """Run batches until the changelog is caught up (or `max_batches`, or `stopped()` says so
        between batches)."""
        with self._held():
            return self._drain(max_batches, progress, stopped)

    def _drain(self, max_batches: int, progress: Callable[[BatchReport], None] | None,
               stopped: Callable[[], bool]) -> Summary:
        summary, conflicts = Summary(), 0
        self.repair()
        while (not max_batches or summary.batches < max_batches) and not stopped():
            try:
                report = self.run_batch()
            except CommitConflict as exc:
                # Not `lakeinlet.retry` (though CommitConflict is transient): a lost commit is not a
                # call to repeat but a re-plan. The next turn plans a new batch from the checkpoint
                # the winner left (nothing of ours is visible), so there is nothing to wait out and
                # no pause; the cap only stops a loader that keeps losing.
                summary.conflicts, conflicts = summary.conflicts + 1, conflicts + 1
                event(log, "conflict", level=logging.WARNING, error=str(exc), retry=conflicts)
                if conflicts >= MAX_CONFLICTS:
                    raise
                continue
            if report is None:
                break
            conflicts = 0
            summary.count(report)
            if progress:
                progress(report)
        return summary


def _read_outcomes(objs: Sequence[PlannedObject], result: ReadBatch) -> list[Outcome]:
    out = []
    for o in objs:
        ref = (o.bucket, o.key)
        if ref in result.failed:
            status, reason = result.failed[ref]  # its malformed records are quarantined all the same
            out.append(Outcome(o, status, reason, 0, result.bad_records.get(ref, 0)))
            continue
        bad = result.bad_records.get(ref, 0)
        out.append(Outcome(o, LOADED, result.note(ref),
                           result.rows.get(ref, 0), bad))
    return out


__all__ = ["MAX_CONFLICTS", "BatchReport", "Loader", "Summary"]
