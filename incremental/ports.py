"""The loader's boundaries, defined by what the loader calls (one small Protocol each); the values
that cross them live in `port_values.py` and are importable from here too."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lakeinlet.incremental.model import (
    ChangeRow,
    Checkpoint,
    Outcome,
    PlannedObject,
    Position,
    TargetCommit,
)
from lakeinlet.incremental.port_values import (
    NOTHING_READ,
    OVERWRITTEN,
    REPLACED,
    CatalogFormat,
    Compaction,
    Footer,
    ListedObject,
    Load,
    ObjectHead,
    ReadBatch,
    Removal,
    Unreadable,
)

if TYPE_CHECKING:
    from lakeinlet.incremental.registry import CatalogRef
    from lakeinlet.incremental.registry.entry import TableEntry

__all__ = [  # the values, re-exported: `from lakeinlet.incremental.ports import X` keeps working
    "NOTHING_READ", "OVERWRITTEN", "REPLACED", "CatalogFormat", "ChangelogPort", "Compaction", "Footer",
    "LedgerPort", "ListedObject", "Load", "ObjectHead", "ObjectStorePort", "QuarantinePort", "ReadBatch",
    "ReaderPort", "RegistryPort", "Removal", "Staged", "StagedT", "Target", "TargetCatalog", "TargetPort",
    "TargetUpkeep", "TargetView", "Unreadable"]


class ChangelogPort(Protocol):
    def head_version(self) -> int: ...

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        """Rows of the versions after `start.complete`, enough for `max_rows` (whole versions),
        in planning order, and the number of rows of each version read."""
        ...


class ObjectStorePort(Protocol):
    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead | Unreadable]: ...

    def footers(self, objs: Sequence[PlannedObject], heads: Mapping[tuple[str, str], ObjectHead]
                ) -> dict[tuple[str, str], Footer | str]:
        """Parquet footers (or OVERWRITTEN); objects left out were not read."""
        ...

    def list(self, bucket: str, prefix: str) -> Iterator[ListedObject]: ...


class ReaderPort(Protocol):
    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any | None,
             heads: Mapping[tuple[str, str], ObjectHead] | None = None,
             single_pass: bool = False) -> ReadBatch:
        """Read the objects (one Spark read), validate them against their HEADs and the table's
        schema, and count rows per object; with `single_pass`, the checks may ride on the write
        (`ReadBatch.verify`) for a target that checks between writing and committing."""
        ...


class Staged(Protocol):
    """A change written to the target but not visible yet: what `publish` makes visible."""

    outcomes: list[Outcome]
    """Every planned object's outcome as the commit records it (rows deleted included)."""

    def discard(self) -> None:
        """Drop what staging wrote (what is left, `vacuum` deletes later)."""
        ...


StagedT = TypeVar("StagedT", bound=Staged)


class TargetPort(Protocol[StagedT]):
    """One target table as the loader writes it, whatever its format: see `targets/`. Each
    adapter's `publish` takes the `Staged` its own `stage` made."""

    stamp: Mapping[str, str]
    """What every commit of this run records besides its batch (its filters: `filter_record`)."""
    stages_rows: bool
    """Whether `stage` writes a Load's rows, so checks that ride on the write run before the rows
    are visible: Delta and Iceberg stage files that `publish` commits; Hudi's one-pass write runs
    the checks inside Hudi's commit (a pre-commit hook, `hudi/one_pass.py`), so its `stage`
    commits and `publish` returns that version. False where Hudi lacks the hook: it then writes
    and commits at once in `publish`, after a checked read."""

    def checkpoint(self) -> Checkpoint: ...

    def schema(self) -> Any | None: ...

    def stage(self, change: Load | Removal, start: Position, end: Position, batch_id: str) -> StagedT:
        """Write the change, invisible to readers, to be published with the checkpoint `end`."""
        ...

    def publish(self, staged: StagedT) -> int:
        """Make the staged change and its checkpoint visible in one commit; returns its version.

        Raises:
            CommitConflict: the checkpoint is no longer the staged change's `start` (another
                loader won); nothing of it is visible.
        """
        ...

    def commit_position(self, start: Position | None, to: Position, reason: str, operation: str) -> int:
        """A commit without rows that moves the checkpoint (reset, first-run start)."""
        ...

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        """(target version, batch id, outcomes) of loader commits after `target_version`."""
        ...


class TargetView(Protocol):
    """One target table as commands and operator views read it (no format branch outside targets/)."""

    uri: str
    app_id: str

    def checkpoint(self) -> Checkpoint: ...

    def schema(self) -> Any | None: ...

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        """The table's commits, newest first (`limit`: at most that many)."""
        ...

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]: ...

    def rows(self, columns: Sequence[str] | None = None) -> Any:
        """The table's rows (only `columns`, if given) as a pyarrow Table, read by the format's own
        reader without Spark; the format's own meta columns are left out.

        Raises:
            FileNotFoundError: there is no table yet.
        """
        ...


class TargetUpkeep(Protocol):
    """What commands do to a target besides loading: clean up, compact, and release what a run holds."""

    def compact(self, target_file_bytes: int, retention_hours: float, dry_run: bool) -> Compaction:
        """Rewrite small data files into files of about `target_file_bytes`, without changing a row,
        the checkpoint or the loader's history (the ledger can still be rebuilt from the target).
        Safe beside a live loader: a conflict makes the rewrite retry or give up, never a batch
        lost or repeated. `retention_hours`: what the format's own history clean-up keeps
        (Iceberg's snapshot expiry), never the commits holding the checkpoint or those the ledger
        has not recorded yet."""
        ...

    def vacuum(self, retention_hours: float, dry_run: bool) -> list[str]:
        """Files no commit references (and stale staging state), older than the retention;
        deleted unless `dry_run`. Returns what was (or would be) deleted."""
        ...

    def release(self) -> None:
        """Drop what this process staged in the table and did not publish (idempotent)."""
        ...


class TargetCatalog(Protocol):
    """What a target tells a catalog registration of itself."""

    catalog_format: CatalogFormat | None
    """None: a format whose tables live in a catalog of their own (Iceberg)."""

    def catalog_partitions(self) -> list[dict[str, str]]:
        """The table's partitions as {column: value} (empty where the catalog does not list them)."""
        ...


class Target(TargetPort[Any], TargetView, TargetUpkeep, TargetCatalog, Protocol):
    """Every role of a target adapter (what the factory builds)."""


class RegistryPort(Protocol):
    """A catalog that query engines read target tables from by name (`registry/`)."""

    def sync(self, ref: CatalogRef, entry: TableEntry) -> str:
        """Create or bring the entry in step: "created", "updated" or "unchanged"."""
        ...

    def add_partitions(self, ref: CatalogRef, entry: TableEntry, values: list[dict[str, str]]) -> int:
        """Register partitions (each {column: value}); how many were new."""
        ...

    def out_of_step(self, ref: CatalogRef, entry: TableEntry) -> str | None:
        """One line on how the catalog's entry differs from `entry`; None when in step."""
        ...


class QuarantinePort(Protocol):
    """Malformed records, kept with their object for repair and replay."""

    def stage(self, records: Any, batch_id: str) -> None:
        """Write the batch's malformed records (before the target commit; invisible until `commit`)."""
        ...

    def commit(self, batch_id: str, target_version: int) -> None:
        """Make the staged records of a committed batch visible (idempotent per target version)."""
        ...


class LedgerPort(Protocol):
    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]: ...

    def identical(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str, str], str]:
        """Refs among `objs` whose ETag is their key's newest loaded version's (the same bytes
        uploaded again), each with that version's identity."""
        ...

    def loaded_times(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], datetime]:
        """(bucket, key)s among `objs` with a loaded version's rows in the target, each with the
        event time of the newest such version."""
        ...

    def last_target_version(self) -> int: ...

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None: ...
