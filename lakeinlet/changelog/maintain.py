"""`lakeinlet-poll maintain`: compact the changelog's small files, write a log checkpoint, and
vacuum the files compaction replaced once no registered loader can still read them."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import DeltaTable
from deltalake.transaction import CommitProperties, PostCommitHookProperties

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import META_PREFIX
from lakeinlet.changelog.settings import MaintainSection
from lakeinlet.delta_io import open_table
from lakeinlet.errors import ConfigError
from lakeinlet.storage import TableLocation, filesystem

HOOKS = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
"""Never delete old log files here: a lagging loader reads those versions' change data feed."""
APPENDS = ("WRITE", "CREATE TABLE", "VACUUM START", "VACUUM END")
"""Operations that add files but remove none (a WRITE only in mode Append: appendOnly table)."""
DEFAULT_TARGET_SIZE = 104_857_600


@dataclass(frozen=True)
class Usage:
    files: int
    bytes: int

    def __str__(self) -> str:
        return f"{self.files} files, {self.bytes} bytes"


@dataclass(frozen=True)
class LoaderMark:
    """A registered loader: every changelog version <= `consumed` is consumed (-1: none)."""

    uri: str
    consumed: int


@dataclass(frozen=True)
class MaintainReport:
    changelog: str
    dry_run: bool
    loaders: tuple[LoaderMark, ...]
    versions: tuple[int, int]
    active: tuple[Usage, Usage]
    compacted: tuple[int, int]
    """Files removed and added by the compaction (dry run: the small files it would rewrite, 0)."""
    checkpoint: int | None
    """The version the log checkpoint was written at (None: dry run)."""
    keep_versions: tuple[int, ...] | None
    storage: tuple[Usage, Usage]
    removed: tuple[str, ...]

    def lines(self) -> list[str]:
        would = "would be " if self.dry_run else ""
        keep = "none (--no-loaders)" if self.keep_versions is None else (
            ", ".join(map(str, self.keep_versions)) or "only the newest")
        out = [f"changelog          {self.changelog} (version {self.versions[0]} -> {self.versions[1]})"
               + (" DRY RUN: nothing changed" if self.dry_run else "")]
        out += [f"loader             {m.uri}: consumed through version {m.consumed}" for m in self.loaders]
        out += [f"compaction         {self.compacted[0]} small files {would}rewritten"
                + ("" if self.dry_run else f" as {self.compacted[1]}"),
                "log checkpoint     " + ("would be written" if self.checkpoint is None
                                             else f"at version {self.checkpoint}"),
                f"active files       before: {self.active[0]}; after: {self.active[1]}",
                f"kept snapshots     {keep}",
                f"files removed      {len(self.removed)}" + (" (would be)" if self.dry_run else ""),
                f"storage            before: {self.storage[0]}; after: {self.storage[1]}"]
        return out


def maintain(m: MaintainSection, aws: AwsSection) -> MaintainReport:
    """Compact, checkpoint and vacuum the changelog (or, with --dry-run, report what would be),
    keeping every file a loader at one of the given positions still reads.

    Raises:
        ConfigError: the changelog or a --loader-table is missing, or a loader table is not Delta.
    """
    where = TableLocation(m.changelog)
    uri, options = where.uri, where.options(aws)
    marks = (*(loader_mark(t, m.loader_app_id, aws) for t in m.loader_tables),
             *(LoaderMark("--loader-position", p) for p in m.loader_positions))
    dt = open_table(uri, options)
    if dt is None:
        raise ConfigError([f"--changelog {m.changelog}: expected a Delta table, found none"])
    before, stored = active(dt), storage(uri, aws)
    first = int(dt.version())
    compacted, checkpoint = compact(dt, m.dry_run), None
    if not m.dry_run:
        dt.update_incremental()
        dt.create_checkpoint()
        checkpoint = int(dt.version())
    keep = None if m.no_loaders else keep_versions(dt, min(k.consumed for k in marks))
    removed = dt.vacuum(retention_hours=m.retention_hours, dry_run=m.dry_run, full=False,
                        enforce_retention_duration=False, keep_versions=list(keep or []) or None,
                        post_commithook_properties=HOOKS, commit_properties=_props())
    dt.update_incremental()
    return MaintainReport(m.changelog, m.dry_run, marks, (first, int(dt.version())), (before, active(dt)),
                          compacted, checkpoint, keep, (stored, storage(uri, aws)), tuple(sorted(removed)))


def compact(dt: DeltaTable, dry_run: bool) -> tuple[int, int]:
    """Bin-pack each partition's small files (delta-rs optimize). The rewrite has dataChange=false,
    which `delta.appendOnly` allows and the change data feed skips: a loader reading the versions
    after its checkpoint sees every row once."""
    if dry_run:
        return small_files(dt), 0
    metrics = dt.optimize.compact(post_commithook_properties=HOOKS, commit_properties=_props())
    return int(metrics.get("numFilesRemoved", 0)), int(metrics.get("numFilesAdded", 0))


def _props() -> CommitProperties:
    return CommitProperties(custom_metadata={META_PREFIX + "operation": "maintain"})


def small_files(dt: DeltaTable) -> int:
    """Files a compaction would rewrite: those under the target size, in partitions with two or
    more of them."""
    target = int(dt.metadata().configuration.get("delta.targetFileSize") or DEFAULT_TARGET_SIZE)
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    per_partition: dict[tuple[tuple[str, object], ...], int] = {}
    for a in actions:
        if a["size_bytes"] < target:
            key = tuple(sorted((k, v) for k, v in a.items() if k.startswith("partition.")))
            per_partition[key] = per_partition.get(key, 0) + 1
    return sum(n for n in per_partition.values() if n > 1)


def keep_versions(dt: DeltaTable, consumed: int) -> tuple[int, ...]:
    """Versions whose files the vacuum keeps, so every file any version after `consumed`
    references stays: version `consumed + 1`, and the version before each later commit that may
    remove files (a file only leaves the table in such a commit). The newest is always kept."""
    head = int(dt.version())
    if consumed + 1 > head:
        return ()
    newer = head - consumed - 1
    later = [h for h in dt.history(newer) if int(h["version"]) > consumed + 1] if newer else []
    removing = {int(h["version"]) - 1 for h in later if not _appends_only(h)}
    return tuple(sorted({consumed + 1} | removing))


def _appends_only(h: dict[str, object]) -> bool:
    params = h.get("operationParameters") or {}
    mode = params.get("mode", "Append") if isinstance(params, dict) else "Append"
    return h.get("operation") in APPENDS and mode == "Append"


def active(dt: DeltaTable) -> Usage:
    """The files of the newest version and their bytes (from the log, no listing)."""
    sizes = pa.table(dt.get_add_actions(flatten=True)).column("size_bytes").to_pylist()
    return Usage(len(sizes), sum(sizes))


def storage(uri: str, aws: AwsSection) -> Usage:
    """Data files on storage (a listing: files the log no longer references included; the log
    itself is not counted)."""
    fs, root = filesystem(uri, aws)
    infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    files = [i for i in infos if i.type == pafs.FileType.File
             and not i.path[len(root):].lstrip("/").startswith("_delta_log/")]
    return Usage(len(files), sum(i.size or 0 for i in files))


def loader_mark(table: str, app_id: str, aws: AwsSection) -> LoaderMark:
    """The changelog version a loader has consumed: its Delta target's `txn` for the loader's app
    id (the checkpoint's complete version, which every load and reset commit sets).

    Raises:
        ConfigError: no table at `table`, or a Hudi/Iceberg one (their checkpoints need their
            engines: give those loaders' positions with --loader-position).
    """
    where = TableLocation(table)
    uri, options = where.uri, where.options(aws)
    if not DeltaTable.is_deltatable(uri, options):
        raise ConfigError([f"--loader-table {table}: expected a Delta target table, found "
                           f"{_what_is_there(uri, aws)}"])
    consumed = DeltaTable(uri, storage_options=options).transaction_version(app_id)
    return LoaderMark(table, -1 if consumed is None else int(consumed))


def _what_is_there(uri: str, aws: AwsSection) -> str:
    fs, root = filesystem(uri, aws)
    for folder, name in ((".hoodie", "a Hudi table"), ("metadata", "an Iceberg table")):
        if fs.get_file_info(f"{root}/{folder}").type == pafs.FileType.Directory:
            return f"{name} (maintain reads Delta targets' checkpoints only: give that loader's " \
                   "position with --loader-position, from `lakeinlet-load checkpoint show --json`)"
    return "no table"

