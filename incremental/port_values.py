"""The values that cross the loader's ports (`ports.py`): what a HEAD, a footer and a read found,
what is staged into a target, what a compaction did, what a format tells a catalog."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lakeinlet.incremental.model import MISSING, Outcome, PlannedObject, WriteCheck


@dataclass(frozen=True)
class ObjectHead:
    """What a HEAD returned for a planned object."""

    size: int
    etag: str | None
    last_modified: datetime | None = None
    archive_of: str | None = None
    """The source identity an `--after-load archive:` copy is marked with (its user metadata
    `lakeinlet-source-identity`); None for any other object."""
    first: bytes | None = None
    """The object's first bytes (JSON/CSV sources: `read.sniff` judges them), None if not read."""
    content_encoding: str | None = None
    """The object's Content-Encoding header (`read.codecs` judges it when its bytes were not read)."""


@dataclass(frozen=True)
class Unreadable:
    """A HEAD that found no object to read, and why (no such key, no such bucket, access denied)."""

    reason: str
    status: str = MISSING
    """The ledger status of the object (`filtered` when S3 refuses the request itself)."""
    gone: bool = True
    """Whether S3 said there is no such object (False: it would not say, e.g. access denied)."""


@dataclass(frozen=True)
class ListedObject:
    bucket: str
    key: str
    size: int
    etag: str | None
    last_modified: datetime


REPLACED = ("rows hold U+FFFD, bytes the reader's charset (UTF-8 unless --read-option encoding "
            "says otherwise) could not decode")
"""What a loaded object's ledger reason says of its rows with replacement characters."""


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
    verify: WriteCheck | None = None
    """Set when `data` was not checked before it is written (one pass): the check the loader runs
    (`problem`) after staging and before publishing, and Hudi's pre-commit hook is handed."""
    replaced: dict[tuple[str, str], int] = field(default_factory=dict)
    """(bucket, key) → rows loaded with U+FFFD in a string column (JSON/CSV bytes the reader's
    charset could not decode: e.g. a Latin-1 CSV read as UTF-8)."""
    rescued: dict[tuple[str, str], int] = field(default_factory=dict)
    """(bucket, key) → fields moved to `_rescued_data` (`--on-type-conflict rescue`)."""
    written: dict[tuple[str, str], int] | None = None
    """With a transform (`read.transform`): (bucket, key) → rows the transform made of the object's
    rows (`rows` stays the rows read); None without one."""

    def note(self, ref: tuple[str, str]) -> str:
        """The ledger reason of an object this batch loads: what was dropped or decoded badly, and
        the rows a transform wrote when they are not the rows read."""
        bad, replaced = self.bad_records.get(ref, 0), self.replaced.get(ref, 0)
        notes = [f"{bad} malformed records dropped"] if bad else []
        if self.written is not None and (n := self.written.get(ref, 0)) != self.rows.get(ref, 0):
            notes.append(f"the transform wrote {n} rows of the {self.rows.get(ref, 0)} read")
        if replaced:
            notes.append(f"{replaced} {REPLACED}: if the object has another charset, set "
                         "--read-option encoding=<it> (e.g. ISO-8859-1) and load it again")
        if rescued := self.rescued.get(ref, 0):
            notes.append(f"{rescued} field{'s' if rescued != 1 else ''} rescued into _rescued_data "
                         "(values the table's types cannot hold)")
        return "; ".join(notes)

    def release(self) -> None:
        for df in self.cached:
            df.unpersist()

    def problem(self) -> str | None:
        """After the rows were staged: what the checks that rode on the write found, which an
        object-by-object read must classify (the staged rows are then discarded); None: nothing."""
        return None if self.verify is None else self.verify.problem()


NOTHING_READ = ReadBatch(None, None, {}, {}, {})

OVERWRITTEN = "overwritten"
"""`footers`' answer for an object whose etag is no longer the HEAD's."""


@dataclass(frozen=True)
class Footer:
    """What a Parquet object's footer says: its row count and its Parquet schema."""

    rows: int
    schema: Any
    """pyarrow's ParquetSchema (compared with `equals`)."""

@dataclass(frozen=True)
class Load:
    """A batch's rows to load, with every planned object's outcome; with `replace`, the objects
    whose earlier versions' rows are deleted in the same commit (--on-overwrite replace)."""

    batch: ReadBatch
    outcomes: Sequence[Outcome]
    replace: Sequence[PlannedObject] = ()


@dataclass(frozen=True)
class Removal:
    """The rows of `objs` to delete (ObjectRemoved events), with the batch's decided outcomes."""

    objs: Sequence[PlannedObject]
    decided: Sequence[Outcome]

@dataclass(frozen=True)
class Compaction:
    """What `compact` found and did: the table's live data files and bytes before and after, and
    the files it rewrote (or, in a dry run, would rewrite)."""

    files_before: int
    bytes_before: int
    files_after: int
    bytes_after: int
    rewritten: int
    version: int | None = None
    """The target version of the rewrite's commit; None: a dry run, or nothing to rewrite."""
    detail: str = ""
    """What else the format did or skipped (snapshots expired, a clustering plan), for the report."""

@dataclass(frozen=True)
class CatalogFormat:
    """What a format tells a catalog (Glue, a Hive metastore) of its tables, from the format's own
    folder: the entry's parameters, classes and SerDe, and what else engines expect of it."""

    parameters: Mapping[str, str]
    input_format: str
    output_format: str
    serde: str
    serde_parameters: Mapping[str, str]
    meta_columns: tuple[str, ...] = ()
    """Columns the format adds to every row, registered first (as strings) unless present."""
    partitions_registered: bool = False
    """Whether engines find the table's partitions in the catalog (else in the table's own log)."""
