"""`vacuum`: delete the files no commit references, in the target and the quarantine table."""

from __future__ import annotations

import argparse

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.wiring import Parts
from lakeinlet.logs import say

SHOWN = 50
"""Files listed by name per table; the rest are counted."""


def cmd_vacuum(parts: Parts, args: argparse.Namespace) -> int:
    if args.retention_hours < 1:
        raise TerminalError(f"--retention-hours {args.retention_hours}: at least 1 hour, so that the "
                            "files of a batch still being written are never deleted")
    total = 0
    for name, table in (("target", parts.target), ("quarantine", parts.quarantine)):
        files = table.vacuum(args.retention_hours, args.dry_run)
        total += len(files)
        say(f"{name} {table.uri}: {len(files)} unreferenced files older than {args.retention_hours:g} h")
        for f in files[:SHOWN]:
            say(f"  {f}")
        if len(files) > SHOWN:
            say(f"  … and {len(files) - SHOWN} more")
    say(f"dry run: nothing deleted ({total} files would be)" if args.dry_run else f"deleted {total} files")
    return 0
