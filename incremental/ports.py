"""The loader's boundaries, defined by what the loader calls (one small Protocol each)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from lakeinlet.incremental.model import ChangeRow, Checkpoint, Outcome, PlannedObject, Position, TargetCommit


@dataclass(frozen=True)
class ObjectHead:
    """What a HEAD returned for a planned object."""

    size: int
    etag: str | None
    last_modified: datetime | None = None


@dataclass(frozen=True)
class Unreadable:
    """A HEAD that found no object to read, and why (no such key, no such bucket, access denied)."""

    reason: str


@dataclass(frozen=True)
class ListedObject:
    bucket: str
    key: str
    size: int
    etag: str | None
    last_modified: datetime


@dataclass(frozen=True)
class ReadBatch:
    """What reading one batch produced: the rows to commit, and what happened to each object."""

    data: Any
    """The rows to commit as a Spark DataFrame (lineage columns included; objects in `failed`
    already left out), or None when nothing yielded rows."""
    schema: Any
    """pyarrow schema of `data` (None when `data` is None)."""
    rows: dict[tuple[str, str], int]
    bad_records: dict[tuple[str, str], int]
    failed: dict[tuple[str, str], tuple[str, str]]
    """(bucket, key) → (status, reason) for objects that could not be loaded (corrupt, missing,
    schema conflict)."""
    malformed: Any = None
    """Malformed JSON/CSV records kept for the quarantine table (a DataFrame), or None."""
    cached: tuple[Any, ...] = ()
    """What reading cached, freed by `release` once the batch is committed."""
    verify: Callable[[], str | None] | None = None
    """Set when `data` was not checked before it is written (one pass: the checks ride on the
    write): after writing and before committing, the target calls `check_written`."""

    def release(self) -> None:
        for df in self.cached:
            df.unpersist()

    def check_written(self) -> None:
        """After the write, before the commit: the checks the write collected.

        Raises:
            Reread: something an object-by-object read must classify (the written files must
                not be committed; the loader reads the batch again, checking before writing).
        """
        if self.verify is not None and (why := self.verify()) is not None:
            raise Reread(why)


class Reread(Exception):
    """The one-pass write of a batch found something to classify per object (see ReadBatch)."""


NOTHING_READ = ReadBatch(None, None, {}, {}, {})


class ChangelogPort(Protocol):
    def head_version(self) -> int: ...

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        """Rows of the versions after `start.complete`, enough for `max_rows` (whole versions),
        in planning order, and the number of rows of each version read."""
        ...


OVERWRITTEN = "overwritten"
"""`footers`' answer for an object whose etag is no longer the HEAD's."""


@dataclass(frozen=True)
class Footer:
    """What a Parquet object's footer says: its row count and its Parquet schema."""

    rows: int
    schema: Any
    """pyarrow's ParquetSchema (compared with `equals`)."""


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


class TargetPort(Protocol):
    """One target table, whatever its format (Delta, Hudi, Iceberg): see `targets/`."""

    uri: str
    app_id: str
    checks_after_write: bool
    """Whether it calls `ReadBatch.check_written` between writing and committing (then the reader
    may check while writing, in one pass; Hudi's datasource commits as it writes: False)."""

    def checkpoint(self) -> Checkpoint: ...

    def schema(self) -> Any | None: ...

    def writing(self) -> AbstractContextManager[None]:
        """What a run holds while it writes (Hudi: the table's writer lease; others: nothing)."""
        ...

    def commits(self, limit: int | None = None) -> list[TargetCommit]:
        """The table's commits, newest first (`limit`: at most that many)."""
        ...

    def commit(self, batch: ReadBatch, start: Position, end: Position, batch_id: str,
               outcomes: Sequence[Outcome], crash: Callable[[str], None] | None = None,
               replace: Sequence[PlannedObject] = ()) -> tuple[int, list[Outcome]]:
        """Write and commit the batch's rows with the checkpoint `end`, atomically; returns the
        version and the outcomes as recorded in the commit.

        Args:
            replace: objects whose earlier versions' rows (by _source_bucket/_source_key) are
                deleted in the same commit, for those of them this batch loads (their outcomes
                then count the rows deleted: `replaced_rows`).

        Raises:
            CommitConflict: the checkpoint is no longer `start` (another loader won); nothing of
                this batch is visible.
        """
        ...

    def commit_removal(self, objs: Sequence[PlannedObject], start: Position, end: Position,
                       batch_id: str, decided: Sequence[Outcome],
                       crash: Callable[[str], None] | None = None) -> tuple[int, list[Outcome]]:
        """Delete the rows of `objs` (by _source_bucket/_source_key) with the checkpoint `end`, in
        one commit; returns the version and every outcome (`decided` + one `removed` per object,
        with the rows it deleted), as recorded in the commit.

        Raises:
            CommitConflict: the checkpoint is no longer `start`.
        """
        ...

    def commit_position(self, start: Position | None, to: Position, reason: str, operation: str) -> int:
        """A commit without rows that moves the checkpoint (reset, first-run start)."""
        ...

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        """(target version, batch id, outcomes) of loader commits after `target_version`."""
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

    def loaded_keys(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str]]:
        """(bucket, key)s among `objs` with an earlier version's rows in the target."""
        ...

    def last_target_version(self) -> int: ...

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None: ...
