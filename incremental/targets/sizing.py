"""File sizing at write time: a batch's rows are written as about one file per target size of
source bytes (per partition value), not one file per Spark task; a large batch by a task per core."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lakeinlet.incremental.model import LOADED, Outcome

DEFAULT_FILE_BYTES = 128 * 1024 * 1024
"""--target-file-mb's default, in bytes."""
SPREAD_BYTES = 16 * 1024 * 1024
"""Source bytes a write task gets at least when a batch is spread over the cores (`spread`)."""


def source_bytes(outcomes: Sequence[Outcome]) -> int:
    """Bytes of the objects whose rows a batch writes (their size as the changelog recorded it)."""
    return sum(max(o.obj.size, 0) for o in outcomes if o.status == LOADED and o.rows)


def files_for(size: int, file_bytes: int) -> int:
    """How many files `size` bytes of source data make at `file_bytes` each (at least one)."""
    return max(1, -(-size // max(file_bytes, 1)))


def spread(cores: int, size: int, file_bytes: int) -> int:
    """The file size a batch of `size` source bytes is written at: `file_bytes`, or less when that
    would leave cores idle. A batch of at least two SPREAD_BYTES is written by up to one task per
    core: a coalesced task reads its objects one after the other, waiting on each object's requests
    in turn, so a whole batch in one task runs at the speed of one core and one connection."""
    tasks = min(cores, size // SPREAD_BYTES)
    return file_bytes if tasks <= 1 else min(file_bytes, -(-size // tasks))


def sized(df: Any, size: int, file_bytes: int, partition_by: Sequence[str]) -> Any:
    """`df` laid out in `files_for(size)` Spark partitions before its write, at `spread`'s file
    size over the session's cores (`defaultParallelism`).

    Unpartitioned: coalesced (no shuffle; a batch read from many small objects has a task per
    object or two, and each task would write its own file). Partitioned: repartitioned by the
    partition columns, so each partition value's rows of the batch land in one task, hence one
    file, instead of one file per task that holds any of its rows. Source bytes stand in for the
    written bytes: Parquet is rarely larger than its source, so files stay at or under the target.
    """
    n = files_for(size, spread(df.sparkSession.sparkContext.defaultParallelism, size, file_bytes))
    if partition_by:
        return df.repartition(n, *partition_by)
    return df.coalesce(n)
