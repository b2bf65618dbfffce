"""The loader's boundaries, defined by what the loader calls (one small Protocol each)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from lakeinlet.incremental.model import ChangeRow, Checkpoint, Outcome, PlannedObject, Position


@dataclass(frozen=True)
class ObjectHead:
    """What a HEAD returned for a planned object (None from `head_many` means: not found)."""

    size: int
    etag: str | None


@dataclass(frozen=True)
class ListedObject:
    bucket: str
    key: str
    size: int
    etag: str | None
    last_modified: datetime


@dataclass(frozen=True)
class DataFile:
    """One Parquet file Spark wrote into the table folder, ready to be committed."""

    path: str
    """Relative to the table root, raw (not URL-encoded)."""
    size: int
    partition_values: dict[str, str | None]
    modification_time: int
    stats: str


@dataclass(frozen=True)
class ReadResult:
    """What reading and writing one batch produced."""

    files: tuple[DataFile, ...]
    schema: Any
    """pyarrow schema of the written rows (partition columns included)."""
    rows: dict[tuple[str, str], int]
    bad_records: dict[tuple[str, str], int]
    failed: dict[tuple[str, str], tuple[str, str]]
    """(bucket, key) → (status, reason) for objects that could not be read (corrupt, missing)."""


class ChangelogPort(Protocol):
    def head_version(self) -> int: ...

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        """Rows of the versions after `start.complete`, enough for `max_rows` (whole versions),
        in planning order, and the number of rows of each version read."""
        ...


class ObjectStorePort(Protocol):
    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead | None]: ...

    def list(self, bucket: str, prefix: str) -> Iterator[ListedObject]: ...


class ReaderPort(Protocol):
    def read_write(self, objs: Sequence[PlannedObject], batch_id: str,
                   table_schema: Any | None) -> ReadResult: ...


class TargetPort(Protocol):
    def checkpoint(self) -> Checkpoint: ...

    def schema(self) -> Any | None: ...

    def commit(self, result: ReadResult, start: Position, end: Position, batch_id: str,
               outcomes: Sequence[Outcome]) -> int:
        """Commit files + checkpoint atomically; raises CommitConflict if another loader won."""
        ...

    def batches_after(self, target_version: int) -> list[tuple[int, str, list[Outcome]]]:
        """(target version, batch id, outcomes) of loader commits after `target_version`."""
        ...


class LedgerPort(Protocol):
    def known(self, objs: Sequence[PlannedObject]) -> set[tuple[str, str, str]]: ...

    def last_target_version(self) -> int: ...

    def append(self, outcomes: Sequence[Outcome], target_version: int, batch_id: str) -> None: ...

    def repair(self, target: TargetPort) -> int:
        """Append the outcomes of target commits the ledger has not seen yet."""
        ...
