"""`lakeinlet-load`: the incremental loader's command line (run, checkpoint, backfill, status, cleanup,
maintain).

The same `main` serves the console script and `spark-submit incremental/__main__.py`.
Exit codes: 0 ok, 2 configuration or terminal error, 1 unexpected error, 3 some routes failed
(each named; the other routes committed).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lakeinlet import add_version_flag, logs
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.config import add_arguments, redact_errors, resolve
from lakeinlet.errors import CommitConflict, ConfigError, TerminalError
from lakeinlet.incremental import batch_warnings
from lakeinlet.incremental.bounds import bounds_of
from lakeinlet.incremental.changelog_reader import require as require_changelog
from lakeinlet.incremental.cleanup import Cleanup
from lakeinlet.incremental.commands import backfill as bf
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.commands import maintain as mt
from lakeinlet.incremental.commands.fanout import Fanout, RouteRun
from lakeinlet.incremental.commands.status import queue_lines, table_lines
from lakeinlet.incremental.loader import BatchReport, Summary
from lakeinlet.incremental.routes import Route, routes_of, selected, unrouted_config
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.unrouted import unrouted_run
from lakeinlet.incremental.wiring import Parts, build, build_cleanup, build_routes
from lakeinlet.logs import say
from lakeinlet.preflight import check_locations
from lakeinlet.signals import stop_on_signals
from lakeinlet.spark import spark_line, under_spark_submit

log = logging.getLogger("lakeinlet.loader")


def _when(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


MAX_FAILED_DRAINS = 5
"""--continuous stops after this many failed drains in a row (a lasting outage, or a bug)."""
MAX_PAUSE = 300.0
"""Longest pause before retrying a failed drain (the pause doubles from --interval-seconds)."""


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
                      help="drain, sleep --interval-seconds, repeat; a drain that fails on anything "
                           f"but a terminal error is retried after a growing pause (up to {MAX_PAUSE:g} "
                           f"s), and the run stops after {MAX_FAILED_DRAINS} failed drains in a row")
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
    return parser


ALL = ("tables", "routes", "read", "plan", "run", "cleanup", "hudi", "iceberg", "spark", "aws", "log")
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


class Stop:
    """A stop asked for by SIGTERM/SIGINT: the current batch finishes (a batch is atomic), a pause
    between drains ends at once."""

    def __init__(self) -> None:
        self.requested, self._idle = False, False

    def __call__(self) -> None:
        self.requested = True
        if self._idle:
            raise _StopNow

    def pause(self, seconds: float) -> None:
        if self.requested:
            return
        self._idle = True
        try:
            time.sleep(seconds)
        except _StopNow:
            pass
        finally:
            self._idle = False


class _StopNow(Exception):
    """Raised by the signal handler into a pause between drains."""


def cmd_run(parts: Parts, args: argparse.Namespace) -> int:
    stop = Stop()
    with stop_on_signals(stop, "after the current batch"):
        total = _runs(parts, args, stop)
    logs.event(log, "summary", batches=total.batches, rows=total.rows, conflicts=total.conflicts,
               skipped_known=total.skipped_known, stopped=stop.requested, **dict(total.statuses))
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(total.statuses.items()))
    removed = "".join(f" ({what.format(n)})" for what, n in (
        ("removed {} rows", total.removed_rows),
        ("deleted {} rows of objects' earlier versions", total.replaced_rows),
        ("kept {} malformed records in the quarantine table", total.malformed_records)) if n)
    say(f"loaded {total.rows} rows in {total.batches} batches{removed}"
          + (f"; {outcomes}" if outcomes else "") + ("; stopped on request" if stop.requested else ""))
    return 0


def _runs(parts: Parts, args: argparse.Namespace, stop: Stop) -> Summary:
    """Drains as the mode asks (once, until caught up, or continuously), until asked to stop."""
    cfg = parts.config
    loader = parts.loader()
    clean = build_cleanup(parts)
    total, drains, failed = Summary(), 0, 0
    periodic = mt.Every(cfg.run.maintain_every, functools.partial(mt.maintain, parts), cfg.tables.table or "")
    while not stop.requested:
        one = 1 if not (args.drain or args.continuous) else cfg.run.max_batches
        try:
            summary = loader.drain(max_batches=one, progress=_progress, stopped=lambda: stop.requested)
            total.add(summary)  # committed: counted even if the registration below fails
            if summary.batches or not drains:
                register(parts)
        except TerminalError:
            raise
        except Exception as exc:  # a batch is atomic and the next drain repairs: retrying is safe
            failed += 1
            if not args.continuous or failed >= MAX_FAILED_DRAINS:
                raise
            pause = min(MAX_PAUSE, cfg.run.interval_seconds * 2 ** (failed - 1))
            logs.event(log, "drain failed", level=logging.WARNING, error=f"{type(exc).__name__}: {exc}",
                       failed_in_a_row=failed, retry_in_s=pause)
            stop.pause(pause)
            continue
        failed = 0
        drains += 1
        clean_sources(clean, stopped=lambda: stop.requested)
        if not args.continuous:
            break
        backfill_routes([parts], drains)
        periodic.after(total.batches)
        stop.pause(cfg.run.interval_seconds)
    return total


def clean_sources(clean: Cleanup | None, route: str | None = None,
                  stopped: Callable[[], bool] = lambda: False) -> None:
    """After a drain, with --after-load: one cleanup pass, logged; a failure is logged too (the
    loads go on, and the next pass resumes where this one stopped)."""
    if clean is None:
        return
    named: dict[str, Any] = {"route": route} if route else {}
    try:
        r = clean.run(stopped=stopped)
    except Exception as exc:
        logs.event(log, "cleanup failed", level=logging.WARNING, **named,
                   error=f"{type(exc).__name__}: {exc}"[:500])
        return
    logs.event(log, "cleanup", **named, archived=r.done["archived"], deleted=r.done["deleted"],
               skipped=sum(r.skipped.values()), waiting=r.waiting, left=r.left, failed=r.failed)


def register(parts: Parts, route: str | None = None) -> None:
    """The table's catalog entry brought in step (--catalog), logged when it changed."""
    outcome = parts.register()
    if outcome and outcome != "unchanged":
        named: dict[str, Any] = {"route": route} if route else {}
        logs.event(log, "catalog", **named, catalog=parts.config.tables.catalog, outcome=outcome)


def _progress(r: BatchReport, route: str | None = None) -> None:
    _batch_line(r, route)
    batch_warnings.warn(r.outcomes, r.set_aside())


def _batch_line(r: BatchReport, route: str | None = None) -> None:
    p = r.plan
    timings: dict[str, Any] = {f"{k}_s": round(v, 3) for k, v in r.seconds.items()}
    named: dict[str, Any] = {"route": route} if route else {}
    logs.event(log, "batch", **named, batch=r.batch_id, files=len(p.to_read), rows=r.rows,
               removed_rows=r.removed_rows, replaced_rows=r.replaced_rows,
               bytes=p.bytes, changelog_from=str(p.start), changelog_to=str(p.end),
               versions=list(p.versions), events=p.events, skipped_known=p.skipped_known,
               superseded=p.superseded, target_version=r.target_version,
               **timings)


def cmd_run_routes(config: LoaderConfig, every: list[Route], args: argparse.Namespace) -> int:
    """`run` with routes: every selected route, plus the record of unrouted objects."""
    routes = selected(every, config.routes.route)
    parts = build_routes(config, routes)
    record = build(unrouted_config(config))
    record.rows = parts[0].rows
    runs = [RouteRun(r.name, p.loader(), after_batch=functools.partial(register, p, r.name))
            for r, p in zip(routes, parts, strict=True)]
    runs.append(unrouted_run(record, parts, every))
    cleans = [(r.name, build_cleanup(p)) for r, p in zip(routes, parts, strict=True)]
    fan = Fanout(runs, _progress, config.run.interval_seconds, MAX_PAUSE, config.run.max_batches,
                 threads=config.routes.route_threads)
    stop = Stop()
    try:
        with stop_on_signals(stop, "after the current batch"):
            if args.continuous:
                after = functools.partial(after_route_drain, parts, cleans)
                fan.continuous(lambda: stop.requested, stop.pause, maintaining(parts, routes, runs, after))
            else:
                fan.drain(lambda: stop.requested, once=not args.drain)
                clean_routes(cleans)
    finally:
        for p in [*parts, record]:
            p.close()
    rows = parts[0].rows
    total = fan.total()
    logs.event(log, "summary", routes=len(routes), batches=total.batches, rows=total.rows,
               failed_routes=[r.name for r in fan.failed()], changelog_reads=getattr(rows, "reads", None),
               stopped=stop.requested, **dict(total.statuses))
    for run in runs:
        say(run.line())
    say(f"loaded {total.rows} rows into {len(routes)} tables in {total.batches} batches; the changelog "
          f"read {getattr(rows, 'reads', 0)} times ({getattr(rows, 'versions_read', 0)} versions)"
          + ("; stopped on request" if stop.requested else ""))
    if fan.failed():
        say("error: routes failed: " + ", ".join(r.name for r in fan.failed()), file=sys.stderr)
        return 3
    return 0


def maintaining(parts: list[Parts], routes: list[Route], runs: list[RouteRun],
                then: Callable[[int], None]) -> Callable[[int], None]:
    """`then`, the hook run after each drain of the routes, followed by each route's compaction
    once the route committed --maintain-every more batches."""
    periodic = [(run, mt.Every(p.config.run.maintain_every, functools.partial(mt.maintain, p),
                               p.config.tables.table or "", r.name))
                for r, p, run in zip(routes, parts, runs, strict=False)]

    def after(drains: int) -> None:
        then(drains)
        for run, every in periodic:
            every.after(run.total.batches)

    return after


def after_route_drain(parts: list[Parts], cleans: list[tuple[str, Cleanup | None]], drains: int) -> None:
    """After each drain of the routes: the periodic backfill, then each route's cleanup pass."""
    backfill_routes(parts, drains)
    clean_routes(cleans)


def clean_routes(cleans: list[tuple[str, Cleanup | None]]) -> None:
    for name, clean in cleans:
        clean_sources(clean, name)


def backfill_routes(parts: list[Parts], drains: int) -> None:
    """With --continuous and --backfill-every N: every N drains, each route's (or the table's)
    prefixes of --backfill-bucket are listed for objects no event announced, lakeinlet's own left
    out (a failure is logged: the next round lists again)."""
    run = parts[0].config.run if parts else None
    if run is None or not (run.backfill_every and run.backfill_bucket) or drains % run.backfill_every:
        return
    for p in parts:
        try:
            for prefix in p.config.plan.prefix or ("",):
                bf.backfill(p.store(), p.changelog, p.ledger, run.backfill_bucket, prefix,
                            own=bounds_of(p.config).own)
        except Exception as exc:  # the loads go on; the next periodic backfill lists again
            logs.event(log, "backfill failed", level=logging.WARNING, table=p.config.tables.table,
                       error=f"{type(exc).__name__}: {exc}"[:500])


def freshness_fields(view: ck.CheckpointView) -> dict[str, Any]:
    """The watermark of `checkpoint show --json` (None where no commit records it yet)."""
    mark = view.watermark
    return {"newest_event_time": mark.event_time.isoformat() if mark and mark.event_time else None,
            "changelog_version": mark.changelog_version if mark else None,
            "freshness_seconds": view.freshness_seconds}


def cmd_checkpoint(parts: Parts, args: argparse.Namespace) -> int:
    if args.action == "show":
        view = ck.show(parts.target, parts.changelog)
        if args.json:
            pos = view.checkpoint.position
            numbers = pos.fields() if pos else {"complete": None, "offset": None}
            route = {"route": args.route_name} if getattr(args, "route_name", "") else {}
            say(json.dumps({**route, "checkpoint": str(pos) if pos else None, **numbers, "head": view.head,
                              "lag_versions": view.lag_versions, "lag_events": view.lag_events,
                              "lag_bytes": view.lag_bytes, "lag_seconds": view.lag_seconds,
                              **freshness_fields(view),
                              "pending": [{"version": c.version, "committed_at": c.timestamp.isoformat(),
                                           "events": c.rows} for c in view.pending]}))
        else:
            say("\n".join(view.lines()))
        return 0
    to = ck.resolve(parts.changelog, args.to_version, args.to_time, args.to_latest)
    plan = ck.plan_reset(parts.target, parts.changelog, to, args.reason)
    say("\n".join(plan.lines()))
    if args.dry_run:
        say("dry run: nothing changed")
        return 0
    version = ck.apply_reset(parts.target, plan, args.reason, parts.hold)
    if version is not None:
        say(f"reset recorded in target version {version}")
    return 0


def cmd_backfill(parts: Parts, args: argparse.Namespace) -> int:
    say("\n".join(bf.command(parts, args.since, args.dry_run)))
    return 0


def cmd_vacuum(parts: Parts, args: argparse.Namespace) -> int:
    if args.retention_hours < 1:
        raise TerminalError(f"--retention-hours {args.retention_hours}: at least 1 hour, so that the "
                            "files of a batch still being written are never deleted")
    total = 0
    for name, table in (("target", parts.target), ("quarantine", parts.quarantine)):
        files = table.vacuum(args.retention_hours, args.dry_run)
        total += len(files)
        say(f"{name} {table.uri}: {len(files)} unreferenced files older than {args.retention_hours:g} h")
        for f in files[:50]:
            say(f"  {f}")
        if len(files) > 50:
            say(f"  … and {len(files) - 50} more")
    say(f"dry run: nothing deleted ({total} files would be)" if args.dry_run else f"deleted {total} files")
    return 0


def cmd_cleanup(parts: Parts, args: argparse.Namespace) -> int:
    clean = build_cleanup(parts)
    if clean is None:
        raise TerminalError("cleanup: --after-load is off: give --after-load delete or archive:s3://BUCKET/"
                            "PREFIX (flag, LAKEINLET__CLEANUP__AFTER_LOAD or --config-file)")
    say("\n".join(clean.run(args.dry_run).lines()))
    if args.dry_run:
        say("dry run: nothing changed")
    return 0


def cmd_maintain(parts: Parts, args: argparse.Namespace) -> int:
    """Compact the table; a table that does not exist, or a compaction that kept losing to loader
    commits, is an error on this table (the other routes' tables are still compacted)."""
    if args.retention_hours < 1:
        raise TerminalError(f"--retention-hours {args.retention_hours}: at least 1 hour, so that "
                            "the history a running query or loader still reads is kept")
    try:
        done = mt.maintain(parts, args.retention_hours, args.dry_run)
    except (TerminalError, CommitConflict) as exc:
        logs.event(log, "maintain failed", level=logging.ERROR, table=parts.target.uri, error=str(exc))
        say(f"error: {exc}", file=sys.stderr)
        return 2
    logs.event(log, "maintain", table=parts.target.uri, dry_run=args.dry_run, **mt.fields(done))
    say(mt.line(parts.target.uri, done, args.dry_run))
    if args.dry_run:
        say("dry run: nothing changed")
    return 0


def cmd_status(parts: Parts, args: argparse.Namespace) -> int:
    if queues := queue_lines(parts, args.queue_url, args.dlq_url):
        say("\n".join(queues))
    require_changelog(parts.changelog)  # after the queues: a new deployment's events may be there
    say("\n".join(table_lines(parts)))
    return 0


def locations(config: LoaderConfig) -> dict[str, str]:
    """The tables a command reads or writes, by the flag that names them."""
    t = config.tables
    return {"--changelog": t.changelog or "", "--table": t.table or "", "--ledger": t.ledger_uri,
            "--quarantine": t.quarantine_uri}


COMMANDS = {"run": cmd_run, "checkpoint": cmd_checkpoint, "backfill": cmd_backfill, "vacuum": cmd_vacuum,
            "status": cmd_status, "cleanup": cmd_cleanup,
            "maintain": cmd_maintain}


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
