"""Adapter: the changelog table (delta-rs) as the loader's ordered, bounded source of rows."""

from __future__ import annotations

import threading

import pyarrow as pa

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import ChangeRow, Position
from lakeinlet.incremental.plan import rows_from_records


def require(changelog: DeltaChangelog) -> None:
    """Raises TerminalError, saying what to do, when there is no changelog table at its URI (a
    wrong --changelog, or a new deployment whose poller has not committed yet)."""
    if changelog.table() is None:
        raise TerminalError(
            f"--changelog {changelog.uri}: no changelog table there. On a new deployment the poller "
            "(lakeinlet-poll) creates it with its first commit: start the poller and wait for its "
            "first batch (or run `lakeinlet-load backfill`), then run this again; otherwise fix --changelog")


class ChangelogReader:
    """Reads whole changelog versions after a position, enough for one batch."""

    def __init__(self, changelog: DeltaChangelog, window: int = 64) -> None:
        self.changelog = changelog
        self.window = window

    def head_version(self) -> int:
        return self.changelog.head_version()

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        """Read versions `start.complete+1 ..` until `max_rows` rows past the offset or the head.

        The commit history (a metadata query) gives each version's row count, so only the
        versions the batch needs are read.
        """
        until, need = start.complete, max_rows + start.offset
        for info in self.changelog.commits(after=start.complete, limit=self.window):
            until = info.version
            need -= info.rows
            if need <= 0:
                break
        if until <= start.complete:
            return [], {}
        table = self.changelog.read_versions(after=start.complete, until=until)
        rows = rows_from_records(pa.table(table).to_pylist())
        sizes: dict[int, int] = {}
        for r in rows:
            sizes[r.commit_version] = sizes.get(r.commit_version, 0) + 1
        return rows, sizes


class SharedChangelogReader(ChangelogReader):
    """One read of each changelog version for every route of a run: versions are kept (newest
    `keep_rows` rows' worth) so routes at nearby positions plan from the same rows."""

    def __init__(self, changelog: DeltaChangelog, window: int = 64, keep_rows: int = 200_000) -> None:
        super().__init__(changelog, window)
        self.keep_rows = keep_rows
        self._versions: dict[int, list[ChangeRow]] = {}
        self._commits: dict[int, int] = {}
        self.reads = self.versions_read = 0
        self._lock = threading.Lock()  # routes may plan at once (--route-threads)

    def rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        with self._lock:
            return self._rows_after(start, max_rows)

    def _rows_after(self, start: Position, max_rows: int) -> tuple[list[ChangeRow], dict[int, int]]:
        until, need = start.complete, max_rows + start.offset
        for version, count in self._history(start.complete):
            until = version
            need -= count
            if need <= 0:
                break
        if until <= start.complete:
            return [], {}
        wanted = range(start.complete + 1, until + 1)
        missing = [v for v in wanted if v not in self._versions]
        if missing:
            self._read(missing[0], missing[-1])
        rows = [r for v in wanted for r in self._versions.get(v, [])]
        return rows, {v: len(self._versions.get(v, [])) for v in wanted}

    def _history(self, after: int) -> list[tuple[int, int]]:
        """(version, rows) after `after`, up to the window; the history known already is reused,
        and only versions past it are asked for."""
        known: list[tuple[int, int]] = []
        v = after + 1
        while v in self._commits and len(known) < self.window:
            known.append((v, self._commits[v]))
            v += 1
        if len(known) < self.window:
            for info in self.changelog.commits(after=v - 1, limit=self.window - len(known)):
                self._commits[info.version] = info.rows
                known.append((info.version, info.rows))
        return known

    def _read(self, first: int, last: int) -> None:
        table = self.changelog.read_versions(after=first - 1, until=last)
        self.reads += 1
        self.versions_read += last - first + 1
        for v in range(first, last + 1):
            self._versions[v] = []
        for r in rows_from_records(pa.table(table).to_pylist()):
            self._versions.setdefault(r.commit_version, []).append(r)
        while sum(map(len, self._versions.values())) > self.keep_rows and len(self._versions) > 1:
            del self._versions[min(self._versions)]
