"""Settings of upserts by key (change data: a full load, then inserts, updates and deletes) and the
value a run carries: the key, the column that orders a key's changes, the rows that delete it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lakeinlet.config import setting
from lakeinlet.incremental.targets.hudi.settings import HudiSection

COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Merge:
    """Each batch merged by `keys`: per key, the change with the greatest `order_by` wins (within
    the batch and against the table); a winning change that `delete_when` holds for deletes it."""

    keys: tuple[str, ...]
    order_by: str | None = None
    delete_when: str | None = None

    @property
    def label(self) -> str:
        """How lines and commits name it."""
        words = [f"--merge-key {','.join(self.keys)}"]
        if self.order_by:
            words.append(f"--order-by {self.order_by}")
        if self.delete_when:
            words.append(f"--delete-when {' '.join(self.delete_when.split())!r}")
        return " ".join(words)


@dataclass(frozen=True)
class MergeSection:
    """Upserts by key and deletes (docs/concepts/change-data.md)."""

    merge_key: tuple[str, ...] = setting(
        (), "Columns that identify a row (comma list): each batch is merged into the table by them "
        "instead of appended. A key's newest change (by --order-by) replaces its row; an older "
        "change than the row the table holds is skipped, in the batch and in later ones.",
        metavar="COLUMN")
    order_by: str | None = setting(
        None, "With --merge-key: the column that orders a key's changes (a commit timestamp, a log "
        "sequence number); the greatest wins, a null is the oldest. Unset: the last change read wins "
        "(by its object's event time, then key, then line).", metavar="COLUMN")
    delete_when: str | None = setting(
        None, "With --merge-key: a Spark SQL condition on a change's columns that makes it a delete "
        "of its key (e.g. \"Op = 'D'\" for AWS DMS); a delete older than the row is skipped too.",
        metavar="SQL")

    @property
    def spec(self) -> Merge | None:
        """The merge to run (None: batches are appended)."""
        keys = tuple(k.strip() for k in self.merge_key if k.strip())
        if not keys:
            return None
        return Merge(keys, (self.order_by or "").strip() or None, (self.delete_when or "").strip() or None)

    def validate(self) -> list[str]:
        keys = [k.strip() for k in self.merge_key if k.strip()]
        problems = [f"--merge-key: expected column names, found {k!r}" for k in keys if not COLUMN.match(k)]
        if len(set(keys)) != len(keys):
            problems.append(f"--merge-key: a column given twice ({', '.join(keys)})")
        order = (self.order_by or "").strip()
        if order and not COLUMN.match(order):
            problems.append(f"--order-by: expected a column name, found {order!r}")
        if not keys:
            given = (("order-by", order), ("delete-when", (self.delete_when or "").strip()))
            problems += [f"--{n}: needs --merge-key (the columns a change applies to)" for n, v in given if v]
        elif order in keys:
            problems.append(f"--order-by {order}: it is a --merge-key column (a key's changes all share it)")
        return problems

    def conflicts(self, hudi: HudiSection) -> list[str]:
        """Settings that cannot go with a merge: a Hudi record key other than the merge key."""
        spec = self.spec
        given = [k.strip() for k in (hudi.hudi_record_key or "").split(",") if k.strip()]
        if spec is None or not given or tuple(given) == spec.keys:
            return []
        return [f"--hudi-record-key {hudi.hudi_record_key} with --merge-key {','.join(spec.keys)}: a merge "
                "keys the Hudi table by --merge-key (and orders it by --order-by): drop --hudi-record-key"]
