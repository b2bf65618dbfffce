"""File sizing at write time: a batch's rows are written as about one file per target size of
source bytes (per partition value), not one file per Spark task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lakeinlet.incremental.model import LOADED, Outcome

DEFAULT_FILE_BYTES = 128 * 1024 * 1024
"""--target-file-mb's default, in bytes."""


def source_bytes(outcomes: Sequence[Outcome]) -> int:
    """Bytes of the objects whose rows a batch writes (their size as the changelog recorded it)."""
    return sum(max(o.obj.size, 0) for o in outcomes if o.status == LOADED and o.rows)


def files_for(size: int, file_bytes: int) -> int:
    """How many files `size` bytes of source data make at `file_bytes` each (at least one)."""
    return max(1, -(-size // max(file_bytes, 1)))


def sized(df: Any, size: int, file_bytes: int, partition_by: Sequence[str]) -> Any:
    """`df` laid out in `files_for(size)` Spark partitions before its write.

    Unpartitioned: coalesced (no shuffle; a batch read from many small objects has a task per
    object or two, and each task would write its own file). Partitioned: repartitioned by the
    partition columns, so each partition value's rows of the batch land in one task, hence one
    file, instead of one file per task that holds any of its rows. Source bytes stand in for the
    written bytes: Parquet is rarely larger than its source, so files stay at or under the target.
    """
    n = files_for(size, file_bytes)
    if partition_by:
        return df.repartition(n, *partition_by)
    return df.coalesce(n)
