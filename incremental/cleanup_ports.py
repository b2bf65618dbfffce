"""The source cleanup's ports (`cleanup.py`): the source store, the ledger's loaded rows and the
cleanup log, and the values that cross them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from lakeinlet.events import NULL_VERSION
from lakeinlet.incremental.archived import IDENTITY_META

ARCHIVED, DELETED, SKIPPED = "archived", "deleted", "skipped"
"""A cleanup record's status."""
GONE, CHANGED = "gone", "changed"
"""What a conditional delete found instead of the version it was given: no object, another version."""


@dataclass(frozen=True)
class Loaded:
    """One source object version the ledger records loaded in a committed batch."""

    bucket: str
    key: str
    identity: str
    etag: str | None
    version_id: str | None
    target_version: int
    loaded_at: datetime

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.bucket, self.key, self.identity)

    def same_version(self, head: SourceHead) -> bool | None:
        """Whether the current object is the version loaded (None: the load recorded neither a
        version id nor an etag, so nothing can tell)."""
        if self.version_id and self.version_id != NULL_VERSION:
            return head.version_id == self.version_id
        if self.etag:
            return head.etag == self.etag.strip('"')
        return None


@dataclass(frozen=True)
class SourceHead:
    """A HEAD's answer: which version is there, and what an archived copy keeps of it."""

    etag: str | None
    version_id: str | None
    size: int
    metadata: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, Any] = field(default_factory=dict)
    """Content-Type and the other headers a copy with new metadata must repeat."""

    @property
    def archive_of(self) -> str | None:
        return self.metadata.get(IDENTITY_META)


@dataclass(frozen=True)
class CleanupRecord:
    """One row of the cleanup log: what became of one loaded version (final for it)."""

    obj: Loaded
    action: str
    status: str
    reason: str = ""
    destination: str | None = None


class SourceCleaner(Protocol):
    """The source side: HEAD, copy one exact version, delete only the version given."""

    def head(self, bucket: str, key: str) -> SourceHead | None: ...

    def copy(self, obj: Loaded, head: SourceHead, bucket: str, key: str) -> None: ...

    def delete(self, bucket: str, key: str, etag: str, version_id: str | None = None) -> str:
        """DELETED, GONE (nothing there) or CHANGED (another version there: nothing deleted);
        with `version_id`, that version only."""
        ...

    def honours_if_match(self, bucket: str, key: str) -> bool: ...


class LoadedLedger(Protocol):
    def rows_after_version(self, target_version: int) -> list[dict[str, Any]]:
        """The ledger's `loaded` and `removed` rows of target versions after `target_version`."""
        ...


class CleanupLog(Protocol):
    def floor(self) -> int:
        """The ledger target version through which every loaded version is settled (-1: none)."""
        ...

    def settled(self, after_version: int) -> set[tuple[str, str, str]]: ...

    def append(self, records: Sequence[CleanupRecord], floor: int, pass_id: str) -> None: ...
