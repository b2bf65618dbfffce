"""`cleanup`: one pass of --after-load (archive or delete the loaded source objects), printed."""

from __future__ import annotations

import argparse

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.wiring import Parts, build_cleanup
from lakeinlet.logs import say


def cmd_cleanup(parts: Parts, args: argparse.Namespace) -> int:
    clean = build_cleanup(parts)
    if clean is None:
        raise TerminalError("cleanup: --after-load is off: give --after-load delete or archive:s3://BUCKET/"
                            "PREFIX (flag, LAKEINLET__CLEANUP__AFTER_LOAD or --config-file)")
    say("\n".join(clean.run(args.dry_run).lines()))
    if args.dry_run:
        say("dry run: nothing changed")
    return 0
