"""What a loader reports: one batch's outcomes and timings, and a run's totals over its batches."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lakeinlet.incremental.model import (
    CORRUPT,
    MISSING,
    REMOVED,
    SCHEMA_CONFLICT,
    TOO_LARGE,
    LoadPlan,
    Outcome,
)


@dataclass(frozen=True)
class BatchReport:
    batch_id: str
    plan: LoadPlan
    target_version: int | None
    outcomes: tuple[Outcome, ...]
    seconds: dict[str, float]

    @property
    def rows(self) -> int:
        """Rows loaded (a removal's outcomes count the rows removed: `removed_rows`)."""
        return sum(o.rows for o in self.outcomes if o.status != REMOVED)

    @property
    def removed_rows(self) -> int:
        return sum(o.rows for o in self.outcomes if o.status == REMOVED)

    @property
    def replaced_rows(self) -> int:
        """Rows of earlier object versions deleted by this batch's loads (--on-overwrite replace)."""
        return sum(o.replaced_rows for o in self.outcomes)

    @property
    def malformed_records(self) -> int:
        """Malformed JSON/CSV records of loaded objects, kept in the quarantine table."""
        return sum(o.bad_records for o in self.outcomes)

    def set_aside(self) -> list[Outcome]:
        """Objects with bytes that were not loaded for a reason the user should see."""
        return [o for o in self.outcomes if o.status in (MISSING, CORRUPT, SCHEMA_CONFLICT, TOO_LARGE)]


@dataclass
class Summary:
    batches: int = 0
    conflicts: int = 0
    rows: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    skipped_known: int = 0
    removed_rows: int = 0
    replaced_rows: int = 0
    malformed_records: int = 0

    def count(self, report: BatchReport) -> None:
        """Count one batch's report in this summary."""
        self.batches += 1
        self.rows += report.rows
        self.removed_rows += report.removed_rows
        self.replaced_rows += report.replaced_rows
        self.malformed_records += report.malformed_records
        self.skipped_known += report.plan.skipped_known
        self.statuses.update(o.status for o in report.outcomes)

    def add(self, other: Summary) -> None:
        """Count `other`'s batches in this summary (a run's total over its drains)."""
        for name in ("batches", "conflicts", "rows", "skipped_known", "removed_rows", "replaced_rows",
                     "malformed_records"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.statuses.update(other.statuses)
