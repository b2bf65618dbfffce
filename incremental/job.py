"""`lakeinlet-load`: the incremental loader's command line (run, checkpoint, backfill, status, cleanup,
maintain).

The same `main` serves the console script and `spark-submit incremental/__main__.py`.
Exit codes: 0 ok, 2 configuration or terminal error, 1 unexpected error, 3 some routes failed
(each named; the other routes committed).
"""

from __future__ import annotations

import argparse
import logging
import sys
from datetime import UTC, datetime

from lakeinlet import add_version_flag, logs
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.config import add_arguments, redact_errors, resolve
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental.changelog_reader import require as require_changelog
from lakeinlet.incremental.commands import locations
from lakeinlet.incremental.commands import maintain as mt
from lakeinlet.incremental.commands.backfill import cmd_backfill
from lakeinlet.incremental.commands.checkpoint_command import cmd_checkpoint
from lakeinlet.incremental.commands.cleanup import cmd_cleanup
from lakeinlet.incremental.commands.run import MAX_PAUSE, cmd_run, cmd_run_routes
from lakeinlet.incremental.commands.status import cmd_status
from lakeinlet.incremental.commands.vacuum import cmd_vacuum
from lakeinlet.incremental.routes import routes_of, selected
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.wiring import build
from lakeinlet.logs import say
from lakeinlet.preflight import check_locations
from lakeinlet.spark import spark_line, under_spark_submit

log = logging.getLogger(__name__)


def _when(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakeinlet-load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    redact_errors(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    run = _sub(sub, "run", "load changelog rows into the target (once, --drain or --continuous)", ALL)
    mode = run.add_mutually_exclusive_group()
    mode.add_argument("--drain", action="store_true", help="run batches until caught up, then exit")
    mode.add_argument("--continuous", action="store_true",
                      help="drain, sleep --interval-seconds, repeat; a failed drain (the table's, or "
                           "a route's: the other routes go on) is logged and retried after a pause "
                           f"doubling from --interval-seconds up to {MAX_PAUSE:g} s, for as long as "
                           "the run goes; a run stopped while its table's last drain had failed exits "
                           "non-zero")
    cp = sub.add_parser("checkpoint", help="show or reset the loader's checkpoint")
    redact_errors(cp)
    cps = cp.add_subparsers(dest="action", required=True)
    show = _sub(cps, "show", "the checkpoint, changelog versions after it, and the lag", TABLES)
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    reset = _sub(cps, "reset", "move the checkpoint (audited in the target's history)", TABLES)
    to = reset.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-version", type=int, metavar="N",
                    help="the next run reads from changelog version N on (0 ≤ N ≤ the head; required: "
                         "one of --to-version, --to-time, --to-latest)")
    to.add_argument("--to-time", type=_when, metavar="ISO-TIME",
                    help="the next run reads the versions committed after this time (not in the future)")
    to.add_argument("--to-latest", action="store_true",
                    help="skip every version up to the changelog's head on purpose: the next run "
                         "reads only versions committed after it")
    reset.add_argument("--reason", default="manual reset", help="recorded in the target's history; "
                       "re-running with the same target and reason changes nothing")
    reset.add_argument("--dry-run", action="store_true", help="print what would be re-read or skipped")
    back = _sub(sub, "backfill", "append synthetic events for objects notifications missed "
                "(lists the --prefix prefixes of each --bucket, or the whole bucket; --bucket is "
                "required here and is the loader's allow-list too)", (*TABLES, "plan"))
    back.add_argument("--since", type=_when, help="only objects modified at or after this time")
    back.add_argument("--dry-run", action="store_true", help="print the objects and bytes it would add")
    vac = _sub(sub, "vacuum", "delete files no commit references (batches that crashed or lost a "
               "commit race), in the target and the quarantine table", TABLES)
    vac.add_argument("--retention-hours", type=float, default=168.0, metavar="H",
                     help="only files older than this; it must exceed the longest batch, whose "
                          "files are not committed yet (default: 168, minimum: 1)")
    vac.add_argument("--dry-run", action="store_true", help="list the files it would delete")
    mnt = _sub(sub, "maintain", "rewrite the target's small files into files of about --target-file-mb "
               "(Delta: a dataChange=false rewrite; Iceberg: rewrite_data_files, then snapshot expiry; "
               "Hudi: clustering); safe beside a running loader", (*TABLES, "spark"))
    mnt.add_argument("--retention-hours", type=float, default=mt.RETENTION_HOURS, metavar="H",
                     help="history the format's own clean-up keeps (Iceberg's snapshot expiry, which "
                          "never expires the snapshot holding the checkpoint); Delta's replaced files "
                          f"stay until `vacuum` (default: {mt.RETENTION_HOURS:g}, minimum: 1)")
    mnt.add_argument("--dry-run", action="store_true",
                     help="count the files it would rewrite; change nothing")
    clean = _sub(sub, "cleanup", "one pass of --after-load: archive or delete the source objects "
                 "loaded at least --after-load-retention-hours ago, then print what it did", CLEANUP)
    clean.add_argument("--dry-run", action="store_true", help="print what the pass would archive, "
                       "delete or skip (it HEADs the objects), changing nothing")
    st = _sub(sub, "status", "queue/DLQ depth, changelog head, checkpoint, lag", TABLES)
    st.add_argument("--queue-url", help="event queue to report the depth of")
    st.add_argument("--dlq-url", help="dead-letter queue to report the depth of")
    st.add_argument("--json", action="store_true", help="print one JSON object per route instead of "
                    "text (keys: docs/reference/status-json.md)")
    return parser


ALL = ("tables", "routes", "read", "transform", "merge", "plan", "run", "cleanup", "hudi", "iceberg", "spark",
       "aws", "log", "metrics")
TABLES = ("tables", "routes", "hudi", "iceberg", "aws", "log")
CLEANUP = ("tables", "routes", "plan", "cleanup", "aws", "log")
COMMON = ("The other settings ({}) are accepted here too, as flags, LAKEINLET__<SECTION>__<KEY> "
          "environment variables or --config-file keys: `lakeinlet-load run --help` lists them.")


def _sub(sub: argparse._SubParsersAction, name: str, text: str,
         sections: tuple[str, ...]) -> argparse.ArgumentParser:
    rest = [s for s in ALL if s not in sections]
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=text, description=text, epilog=COMMON.format(", ".join(rest)) if rest else None)
    p.add_argument("--config-file", help="TOML file with [section] key = value settings")
    add_arguments(p, LoaderConfig, sections)
    return p


COMMANDS = {"run": cmd_run, "checkpoint": cmd_checkpoint, "backfill": cmd_backfill, "vacuum": cmd_vacuum,
            "status": cmd_status, "cleanup": cmd_cleanup,
            "maintain": mt.cmd_maintain}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = resolve(LoaderConfig, args)
        logs.setup(config.log.log_format, config.log.log_level)
        every = routes_of(config) if config.routes.enabled else None
        named = ([(r.name, r.config) for r in selected(every, config.routes.route)] if every
                 else [("", config)])
        configs = [c for _, c in named]
        for c in configs:
            check_locations(locations(c), config.aws)
        engines = sorted({c.tables.target_format for c in configs} - {"delta"})
        if (args.command == "run" or (args.command == "maintain" and engines)) and not under_spark_submit():
            # a format this Spark line lacks stops the run here, not at its first batch
            spark_line(engines)
        if args.command in ("run", "checkpoint"):
            require_changelog(DeltaChangelog(config.tables.changelog or "", config.aws))
        if every is not None and args.command == "run":
            return cmd_run_routes(config, every, args)
        code = 0
        for name, c in named:
            args.route_name = name
            if name and not getattr(args, "json", False):  # JSON lines name their route instead
                say(f"== route {name} ==")
            parts = build(c, route=name or None)
            try:
                code = max(code, COMMANDS[args.command](parts, args))
            finally:
                parts.close()
        return code
    except ConfigError as exc:
        say(str(exc), file=sys.stderr)
        return 2
    except TerminalError as exc:
        logs.event(log, "failed", level=logging.ERROR, error=str(exc))
        say(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception:
        log.exception("unexpected error")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
