"""`maintain`: rewrite the target's small files into files of about --target-file-mb, once (the
command) or every N batches of a --continuous run; each format's way in its adapter's `compact`."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lakeinlet import logs
from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.commands.checkpoint import mib
from lakeinlet.incremental.ports import Compaction
from lakeinlet.logs import say

if TYPE_CHECKING:
    from lakeinlet.incremental.wiring import Parts

log = logging.getLogger(__name__)
RETENTION_HOURS = 168.0
"""History the format's own clean-up keeps when `maintain` runs without --retention-hours (and
when a --continuous run compacts: --maintain-every)."""
MIB = 1024 * 1024


def maintain(parts: Parts, retention_hours: float = RETENTION_HOURS, dry_run: bool = False) -> Compaction:
    """Compact the table of `parts` (`dry_run`: only count what would be rewritten).

    Raises:
        TerminalError: the table does not exist yet.
        CommitConflict: loader commits kept winning; nothing changed.
    """
    target = parts.target
    if target.schema() is None:
        raise TerminalError(f"--table {target.uri}: no table there yet, nothing to compact (a loader "
                            "creates it with its first batch)")
    if not dry_run:  # commits a crashed loader left unrecorded go to the ledger before any history
        parts.loader().repair()  # is expired (Iceberg), while the target still holds them
    return target.compact(parts.config.tables.target_file_bytes, retention_hours, dry_run)


def line(uri: str, c: Compaction, dry_run: bool) -> str:
    """One table's outcome: files and bytes before → after, files rewritten, the commit, detail."""
    after = "~" if dry_run else ""
    text = (f"{uri}: files {c.files_before} → {after}{c.files_after}, bytes {c.bytes_before} → "
            f"{after}{c.bytes_after} ({mib(c.bytes_before)} → {after}{mib(c.bytes_after)}), ")
    if dry_run:
        text += f"would rewrite {c.rewritten} files"
    elif c.version is None:
        text += "nothing rewritten"
    else:
        text += f"rewrote {c.rewritten} files in version {c.version}"
    return text + (f"; {c.detail}" if c.detail else "")


def fields(c: Compaction) -> dict[str, Any]:
    """A compaction's figures as log fields."""
    return {"files_before": c.files_before, "files_after": c.files_after, "bytes_before": c.bytes_before,
            "bytes_after": c.bytes_after, "rewritten": c.rewritten, "version": c.version,
            "detail": c.detail}


@dataclass
class Every:
    """--maintain-every N: a compaction once N more batches are committed since the last one (or
    since the start). A failure is logged and loading goes on: the next one comes N batches later."""

    every: int
    compact: Callable[[], Compaction]
    table: str
    route: str | None = None
    at: int = 0
    """The run's committed batches when the last compaction started."""

    def after(self, batches: int) -> Compaction | None:
        """Called with the run's committed batches so far; compacts when N more are committed."""
        if self.every <= 0 or batches - self.at < self.every:
            return None
        self.at = batches
        named: dict[str, Any] = {"route": self.route} if self.route else {}
        try:
            done = self.compact()
        except Exception as exc:  # maintenance never stops the loads
            logs.event(log, "maintain failed", level=logging.WARNING, **named, table=self.table,
                       error=f"{type(exc).__name__}: {exc}"[:500])
            return None
        logs.event(log, "maintain", **named, table=self.table, **fields(done))
        return done


def cmd_maintain(parts: Parts, args: argparse.Namespace) -> int:
    """Compact the table; a table that does not exist, or a compaction that kept losing to loader
    commits, is an error on this table (the other routes' tables are still compacted)."""
    if args.retention_hours < 1:
        raise TerminalError(f"--retention-hours {args.retention_hours}: at least 1 hour, so that "
                            "the history a running query or loader still reads is kept")
    try:
        done = maintain(parts, args.retention_hours, args.dry_run)
    except (TerminalError, CommitConflict) as exc:
        logs.event(log, "maintain failed", level=logging.ERROR, table=parts.target.uri, error=str(exc))
        say(f"error: {exc}", file=sys.stderr)
        return 2
    logs.event(log, "maintain", table=parts.target.uri, dry_run=args.dry_run, **fields(done))
    say(line(parts.target.uri, done, args.dry_run))
    if args.dry_run:
        say("dry run: nothing changed")
    return 0
