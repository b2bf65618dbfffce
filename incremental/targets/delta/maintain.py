"""Delta compaction for `lakeinlet-load maintain`: each partition's small files rewritten, in order,
into files of about the target size, swapped in by one commit with dataChange=false that a loader
commit racing it cannot pass unnoticed (see `compact_table`)."""

from __future__ import annotations

import logging
import posixpath
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import DeltaTable

from lakeinlet import logs
from lakeinlet.changelog.log_store import LogStore
from lakeinlet.errors import CommitConflict, TerminalError, TransientError
from lakeinlet.incremental.ports import Compaction
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.delta import swap as sw
from lakeinlet.incremental.targets.delta.files import DataFile, footer_stats, partition_values
from lakeinlet.retry import transient

log = logging.getLogger(__name__)
COMPACT = "compact"
"""`lakeinlet.operation` of a compaction commit (no app id: not a loader commit, no checkpoint)."""
ATTEMPTS = 4
"""Commits tried before giving up when loader commits keep winning."""
PAUSE = 2.0
"""Seconds before the second attempt (then twice as long each time)."""
THREADS = 4
FLUSH_BYTES = 64 * 1024 * 1024
"""Rows buffered per row group: few large row groups, as Spark writes them, not one per source file."""
DROPPED = "dropped {} rewritten runs whose files a loader commit removed meanwhile"


@dataclass(frozen=True)
class Live:
    """A data file of the table as the log lists it (`path` URI-encoded, as logged), with its
    partition folders on storage (`col=value/…`, as Spark wrote and escaped them)."""

    path: str
    size: int
    folder: str


@dataclass(frozen=True)
class Rewritten:
    sources: tuple[Live, ...]
    file: DataFile


def compact_table(latest: Callable[[], DeltaTable | None], fs: pafs.FileSystem, root: str, store: LogStore,
                  uri: str, app_id: str, target_bytes: int, dry_run: bool,
                  sleep: Callable[[float], None] = time.sleep) -> Compaction:
    """Rewrite runs of small files (each partition, in write order) into files of at most about
    `target_bytes`, and commit the swap as an OPTIMIZE with dataChange=false: no row changes,
    readers of the change feed and the loader's history see nothing new.

    The commit repeats the loader's `txn` at its current value. delta-rs lets a data-changing
    removal commit over a file a concurrent dataChange=false commit removed (the removed rows
    would live on in the rewritten file); with the `txn` in the compaction's commit, delta-rs
    fails a loader commit read before it (ConcurrentTransaction) and the loader re-plans its
    batch. A compaction that finds its version taken keeps what it wrote, drops the runs whose
    files changed, and commits again after the newest version.

    Raises:
        TerminalError: there is no table at `uri`, or its protocol needs more than this writes.
        CommitConflict: loader commits won `ATTEMPTS` times in a row (what it wrote is deleted;
            a rewrite that fails half way leaves its files to `vacuum`).
    """
    dt = latest()
    if dt is None:
        raise TerminalError(f"{uri}: no Delta table there yet: nothing to compact")
    _check_writable(dt, uri)
    partition_by = _columns(dt)
    runs = plan(live_files(dt, partition_by), target_bytes)
    if dry_run or not runs:
        return _planned(dt, runs)
    schema = pa.schema([f for f in pa.schema(dt.schema().to_arrow()) if f.name not in partition_by])
    folder = f"data/compact-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
    with ThreadPoolExecutor(THREADS) as pool:
        done = list(pool.map(lambda run: Rewritten(tuple(run), rewrite(fs, root, run, schema, folder,
                                                                        partition_by)), runs))
    return _commit_until_won(_Swap(latest, fs, root, store, uri, app_id, folder, target_bytes, done), sleep)


def live_files(dt: DeltaTable, partition_by: Sequence[str]) -> list[Live]:
    """The table's data files in write order, those in lakeinlet's layout only (a relative path
    whose folders hold every partition value)."""
    t = pa.table(dt.get_add_actions(flatten=True))
    rows = zip(t.column("modification_time").to_pylist(), t.column("path").to_pylist(),
               t.column("size_bytes").to_pylist(), strict=True)
    out = []
    for _, path, size in sorted(rows):
        folder = _partition_folder(sw.storage_path(path), partition_by)
        if folder is not None:
            out.append(Live(path, int(size), folder))
    return out


def plan(files: Sequence[Live], target_bytes: int) -> list[list[Live]]:
    """Runs of consecutive small files per partition, each at most `target_bytes` in all; a file
    of the target size or more ends a run (row order is kept), a run of one file is left alone."""
    runs: list[list[Live]] = []
    by_folder: dict[str, list[Live]] = {}
    for f in files:
        by_folder.setdefault(f.folder, []).append(f)
    for group in by_folder.values():
        run: list[Live] = []
        size = 0
        for f in group:
            if run and (f.size >= target_bytes or size + f.size > target_bytes):
                runs.append(run)
                run, size = [], 0
            if f.size < target_bytes:
                run.append(f)
                size += f.size
        runs.append(run)
    return [r for r in runs if len(r) > 1]


def rewrite(fs: pafs.FileSystem, root: str, run: Sequence[Live], schema: pa.Schema, folder: str,
            partition_by: Sequence[str]) -> DataFile:
    """One Parquet file with the rows of `run`, in order, under `folder` and the run's partition
    folders, in the table's schema (columns a file lacks, added to the table later, are null)."""
    rel = posixpath.join(folder, run[0].folder, f"part-{uuid.uuid4().hex}.c000.snappy.parquet")
    if isinstance(fs, pafs.LocalFileSystem):  # object stores have no folders to make
        fs.create_dir(posixpath.dirname(f"{root}/{rel}"), recursive=True)
    with fs.open_output_stream(f"{root}/{rel}") as sink, \
            pq.ParquetWriter(sink, schema, compression="snappy") as writer:
        buffered: list[pa.RecordBatch] = []
        for f in run:
            with fs.open_input_file(f"{root}/{sw.storage_path(f.path)}") as source:
                for batch in pq.ParquetFile(source).iter_batches():
                    buffered.append(conform(batch, schema))
                    if sum(b.nbytes for b in buffered) >= FLUSH_BYTES:
                        _flush(writer, buffered, schema)
        _flush(writer, buffered, schema)
    info = fs.get_file_info(f"{root}/{rel}")
    mtime = int(info.mtime.timestamp() * 1000) if info.mtime else int(time.time() * 1000)
    return DataFile(rel, int(info.size or 0), partition_values(rel, list(partition_by)), mtime,
                    footer_stats(fs, f"{root}/{rel}"))


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """`batch` in `schema`: its columns cast where types differ, missing ones null."""
    cols = []
    for field in schema:
        i = batch.schema.get_field_index(field.name)
        col = batch.column(i) if i >= 0 else pa.nulls(batch.num_rows, field.type)
        cols.append(col if col.type == field.type else col.cast(field.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _flush(writer: pq.ParquetWriter, buffered: list[pa.RecordBatch], schema: pa.Schema) -> None:
    if buffered:
        table = pa.Table.from_batches(buffered, schema)
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
        buffered.clear()


class _Lost(TransientError):
    """Another writer committed the version the compaction meant to take."""


@dataclass
class _Swap:
    """What one compaction carries from commit attempt to commit attempt."""

    latest: Callable[[], DeltaTable | None]
    fs: pafs.FileSystem
    root: str
    store: LogStore
    uri: str
    app_id: str
    folder: str
    target_bytes: int
    done: list[Rewritten]
    dropped: int = 0
    attempts: int = 0


def _commit_until_won(swap: _Swap, sleep: Callable[[float], None]) -> Compaction:
    """Commit the rewritten runs whose files are all still live, as the version after the newest;
    after a lost race, pause and try again (a commit, not the rewrite)."""
    try:
        retrying = transient(ATTEMPTS, sleep=sleep, on=_Lost, first_wait=PAUSE, max_wait=PAUSE * 4)
        return retrying(_attempt, swap)
    except _Lost as exc:
        _discard(swap.fs, swap.root, swap.done)
        raise CommitConflict(f"compaction of {swap.uri} lost {ATTEMPTS} commit races to loader "
                             "commits in a row: nothing changed; run it again") from exc


def _attempt(swap: _Swap) -> Compaction:
    dt = swap.latest()
    assert dt is not None  # a table is never dropped by lakeinlet
    _check_writable(dt, swap.uri)
    kept = _still_live(dt, swap.fs, swap.root, swap.done)
    _discard(swap.fs, swap.root, [r for r in swap.done if r not in kept])
    swap.dropped, swap.done = swap.dropped + len(swap.done) - len(kept), kept
    if not kept:
        return _nothing(dt, DROPPED.format(swap.dropped))
    version, commit_id = int(dt.version()) + 1, uuid.uuid4().hex
    if sw.put(swap.store, version, _body(dt, swap, commit_id), commit_id):
        return _made(dt, swap, version)
    swap.attempts += 1
    logs.event(log, "compaction lost a commit race", level=logging.WARNING, table=swap.uri,
               attempt=swap.attempts, error=f"version {version} was committed by another writer first")
    raise _Lost(f"{swap.uri}: version {version} was committed by another writer first")


def _body(dt: DeltaTable, swap: _Swap, commit_id: str) -> bytes:
    columns = _columns(dt)
    sources = [(sw.storage_path(f.path), f.size) for r in swap.done for f in r.sources]
    removed = [DataFile(path, size, partition_values(path, columns), 0, "") for path, size in sources]
    added = [r.file for r in swap.done]
    txn = dt.transaction_version(swap.app_id)  # None: no loader commit yet, so none to race with
    meta = {"operation": COMPACT, "folder": swap.folder, "rewritten": str(len(removed)),
            "written": str(len(added))}
    return sw.commit_body(int(dt.version()), removed, added,
                          None if txn is None else (swap.app_id, int(txn)),
                          {"predicate": "[]", "targetSize": str(swap.target_bytes)}, tc.prefixed(meta),
                          commit_id)


def _made(dt: DeltaTable, swap: _Swap, version: int) -> Compaction:
    files, size = _usage(dt)
    sources = [f for r in swap.done for f in r.sources]
    removed, added = sum(f.size for f in sources), sum(r.file.size for r in swap.done)
    detail = f"{len(swap.done)} files written under {swap.folder}/; the replaced files stay until `vacuum`"
    return Compaction(files, size, files - len(sources) + len(swap.done), size - removed + added,
                      len(sources), version,
                      detail + ("; " + DROPPED.format(swap.dropped) if swap.dropped else ""))


def _check_writable(dt: DeltaTable, uri: str) -> None:
    problem = sw.unwritable(dt)
    if problem:
        raise TerminalError(f"{uri}: lakeinlet cannot compact a table with {problem}: "
                            "compact it with delta-spark's OPTIMIZE instead")


def _still_live(dt: DeltaTable, fs: pafs.FileSystem, root: str, done: list[Rewritten]) -> list[Rewritten]:
    """The runs whose sources are all still in the table and whose new file is still on storage
    (a `vacuum` with a retention shorter than the rewrite would have deleted it)."""
    live = set(pa.table(dt.get_add_actions(flatten=True)).column("path").to_pylist())
    there = {i.path for i in fs.get_file_info([f"{root}/{r.file.path}" for r in done])
             if i.type == pafs.FileType.File}
    return [r for r in done if f"{root}/{r.file.path}" in there and all(f.path in live for f in r.sources)]


def _discard(fs: pafs.FileSystem, root: str, done: Sequence[Rewritten]) -> None:
    for r in done:
        with suppress(OSError):
            fs.delete_file(f"{root}/{r.file.path}")


def _planned(dt: DeltaTable, runs: list[list[Live]]) -> Compaction:
    """A dry run's (or an idle run's) answer: files after is one per run, bytes are the same."""
    files, size = _usage(dt)
    rewritten = sum(len(r) for r in runs)
    return Compaction(files, size, files - rewritten + len(runs), size, rewritten, None,
                      f"{len(runs)} runs of small files" if runs else "no partition holds two small files")


def _nothing(dt: DeltaTable, detail: str) -> Compaction:
    files, size = _usage(dt)
    return Compaction(files, size, files, size, 0, None, detail)


def _usage(dt: DeltaTable) -> tuple[int, int]:
    sizes = pa.table(dt.get_add_actions(flatten=True)).column("size_bytes").to_pylist()
    return len(sizes), sum(int(s) for s in sizes)


def _columns(dt: DeltaTable) -> list[str]:
    return list(dt.metadata().partition_columns)


def _partition_folder(path: str, partition_by: Sequence[str]) -> str | None:
    """`col=value/…` of a file's partition (None: not lakeinlet's layout, left alone)."""
    if "://" in path:
        return None
    parts = [p for p in posixpath.dirname(path).split("/") if "=" in p and p.split("=", 1)[0] in partition_by]
    return "/".join(parts) if len(parts) == len(partition_by) else None
