"""Adapter: the changelog table (delta-rs) as the loader's ordered, bounded source of rows."""

from __future__ import annotations

import pyarrow as pa

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.incremental.model import ChangeRow, Position
from lakeinlet.incremental.plan import rows_from_records


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
