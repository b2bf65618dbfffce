"""What a poll run did: counts per closed batch (one log line each) and for the whole run."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lakeinlet import logs
from lakeinlet.sources.acks import AckResult
from lakeinlet.sources.batch import OpenBatch
from lakeinlet.sources.poison import MoveResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchOutcome:
    """What closing one batch achieved, and how long its phases took (seconds)."""

    version: int | None
    acks: AckResult
    moves: MoveResult
    open_s: float
    commit_s: float
    ack_s: float


@dataclass
class RunSummary:
    """Counts for the whole run (the final summary line)."""

    batches: int = 0
    commits: int = 0
    messages: int = 0
    events: int = 0
    rows: int = 0
    acked: int = 0
    skipped: int = 0
    duplicates: int = 0
    foreign: int = 0
    own: int = 0
    """Events under lakeinlet's own locations (--changelog, --lake), acknowledged without a row."""
    poison: int = 0
    poison_moved: int = 0
    poison_move_failures: int = 0
    poison_log_suppressed: int = 0
    first_poison_error: str | None = None
    superseded: int = 0
    delete_failures: int = 0
    last_version: int | None = None
    commit_conflicts: int = 0
    """Changelog versions another poller committed first (each retried at the next version)."""
    receivers_max: int = 0
    """The most receivers that polled at once (a backlog adds some, up to --max-receivers)."""
    seconds: float = 0.0

    def add(self, batch: OpenBatch, out: BatchOutcome) -> None:
        """Count one closed batch and log its line."""
        failures = out.acks.failures + out.moves.acks.failures
        self.batches += 1
        self.commits += out.version is not None
        self.messages += batch.messages
        self.events += batch.events
        self.rows += len(batch.rows)
        self.acked += out.acks.acked
        self.skipped += batch.skipped
        self.duplicates += batch.duplicates
        self.superseded += out.acks.superseded + out.moves.acks.superseded
        self.foreign += sum(batch.foreign.values())
        self.own += sum(batch.own.values())
        self.poison += len(batch.poison)
        self.poison_moved += out.moves.moved
        self.poison_move_failures += out.moves.failed
        self.first_poison_error = self.first_poison_error or batch.first_poison_error
        self.delete_failures += len(failures)
        self.last_version = out.version if out.version is not None else self.last_version
        _log_batch(batch, out, failures)


def _log_batch(batch: OpenBatch, out: BatchOutcome, failures: list[str]) -> None:
    level = logging.WARNING if batch.poison or failures or batch.foreign else logging.INFO
    logs.event(log, "batch", level, poll_batch=batch.poll_batch, messages=batch.messages,
               events=batch.events, rows=len(batch.rows), acked=out.acks.acked,
               skipped=batch.skipped, duplicates=batch.duplicates,
               superseded=out.acks.superseded + out.moves.acks.superseded,
               foreign=dict(batch.foreign), own=dict(batch.own), poison=len(batch.poison),
               poison_moved=out.moves.moved, poison_move_failures=out.moves.failed,
               first_poison_error=batch.first_poison_error,
               delete_failures=len(failures), first_delete_failure=failures[0] if failures else None,
               version=out.version, open_s=round(out.open_s, 4), commit_s=round(out.commit_s, 4),
               ack_s=round(out.ack_s, 4))
