"""The Parquet files one batch wrote: listed with pyarrow, stats computed from their footers."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake.transaction import AddAction

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class DataFile:
    """One Parquet file Spark wrote into the table folder, ready to be committed."""

    path: str
    """Relative to the table root, raw (not URL-encoded)."""
    size: int
    partition_values: dict[str, str | None]
    modification_time: int
    stats: str


def hidden(under_folder: str) -> bool:
    """True if a path below the batch folder is a committer's or writer's own file, not data.

    Spark's rule for hidden paths, applied to every component (not only the base name): a name
    starting with `.`, or with `_` unless it holds `=` (a partition folder such as `_src=x`). So
    a committer's leftovers (`__magic/…`, `_temporary/…`, `.spark-staging-…`) are never data.
    """
    return any(part.startswith(".") or (part.startswith("_") and "=" not in part)
               for part in under_folder.split("/"))


def list_written(fs: pafs.FileSystem, root: str, folder: str) -> list[tuple[str, int, int]]:
    """(path relative to root, size, mtime ms) of the Parquet data files under root/folder."""
    base = f"{root}/{folder}"
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    out = []
    for info in infos:
        if (info.type == pafs.FileType.File and info.path.endswith(".parquet")
                and not hidden(info.path[len(base) + 1:])):
            mtime = int(info.mtime.timestamp() * 1000) if info.mtime else 0
            out.append((info.path[len(root) + 1:], int(info.size or 0), mtime))
    return sorted(out)


def partition_values(rel_path: str, partition_by: list[str]) -> dict[str, str | None]:
    """Partition values from Hive-style folders `col=value` (Spark escapes with %XX)."""
    found: dict[str, str | None] = {}
    for part in posixpath.dirname(rel_path).split("/"):
        name, sep, value = part.partition("=")
        if sep and name in partition_by:
            raw = unquote(value)
            found[name] = None if raw == HIVE_NULL else raw
    return {c: found.get(c) for c in partition_by}


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return None
    return value


def footer_stats(fs: pafs.FileSystem, path: str) -> str:
    """Delta stats JSON from one Parquet footer (top-level primitive columns): what Delta's data
    skipping needs per file (numRecords, minValues, maxValues, nullCount), read from the written
    file, so they describe exactly what was committed."""
    with fs.open_input_file(path) as f:
        meta = pq.ParquetFile(f).metadata
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    unbounded: set[str] = set()
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            col = group.column(c)
            name = col.path_in_schema
            if "." in name:
                continue
            st = col.statistics
            if st is None:
                continue
            nulls[name] = nulls.get(name, 0) + int(st.null_count or 0)
            if st.has_min_max:
                try:
                    lo, hi = _json_value(st.min), _json_value(st.max)
                except UnicodeDecodeError:  # bytes that are not UTF-8 in a string column: no
                    unbounded.add(name)  # bounds at all (one row group's alone would mislead)
                    continue
                if lo is not None and (name not in mins or lo < mins[name]):
                    mins[name] = lo
                if hi is not None and (name not in maxs or hi > maxs[name]):
                    maxs[name] = hi
    for name in unbounded:
        mins.pop(name, None)
        maxs.pop(name, None)
    return json.dumps({"numRecords": meta.num_rows, "minValues": mins, "maxValues": maxs,
                       "nullCount": nulls})


def data_files(fs: pafs.FileSystem, root: str, folder: str, partition_by: list[str],
               threads: int = 8) -> list[DataFile]:
    """The files written under root/folder as DataFiles (stats read in parallel)."""
    listed = list_written(fs, root, folder)
    with ThreadPoolExecutor(threads) as pool:
        stats = list(pool.map(lambda item: footer_stats(fs, f"{root}/{item[0]}"), listed))
    return [DataFile(rel, size, partition_values(rel, partition_by), mtime, st)
            for (rel, size, mtime), st in zip(listed, stats, strict=True)]


def vanished(fs: pafs.FileSystem, root: str, files: Sequence[DataFile]) -> list[str]:
    """The paths among one batch's `files` (all under its `data/<batch id>` folder) no longer there."""
    if not files:
        return []
    folder = "/".join(files[0].path.split("/")[:2])  # data/<batch id>
    there = {rel for rel, _, _ in list_written(fs, root, folder)}
    return [f.path for f in files if f.path not in there]


def add_action(f: DataFile) -> AddAction:
    """The AddAction that commits `f`."""
    return AddAction(f.path, f.size, f.partition_values, f.modification_time, True, f.stats)
