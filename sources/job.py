"""`lakeinlet-poll`: job 1, the event source (SQS S3 notifications → changelog table). Exit codes:
0 ok, 2 configuration or terminal error, 1 unexpected; `sources/__main__.py` is the spark-submit form."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
from collections.abc import Callable, Sequence

from lakeinlet import add_version_flag, logs
from lakeinlet.changelog.maintain import maintain
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.config import resolve
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.metrics import registry_of, serving
from lakeinlet.own import OwnLocations
from lakeinlet.preflight import check_locations
from lakeinlet.signals import stop_on_signals
from lakeinlet.sources.commands import PROG, USAGES, build_parser, commands_epilog
from lakeinlet.sources.envelopes import EventFilter
from lakeinlet.sources.metrics import PollerCollector, beating
from lakeinlet.sources.poller import Poller, PollerSettings, RunSummary
from lakeinlet.sources.queue_metrics import QueueDepthCollector
from lakeinlet.sources.settings import MaintainConfig, SourceConfig, StatusConfig
from lakeinlet.sources.sqs import SqsQueue
from lakeinlet.sources.status import status_text

log = logging.getLogger(__name__)

POLL_USAGE = (f"{PROG} --queue-url URL --changelog URI (--bucket B | --any-bucket) [options]\n"
              + "".join(f"       {usage}\n" for usage in USAGES.values()))


def poller_settings(config: SourceConfig) -> PollerSettings:
    """The poller's knobs from the job configuration."""
    q, b, f, p = config.queue, config.batch, config.filter, config.poison
    source_id = config.changelog.source_id or q.queue_url.rstrip("/").rsplit("/", 1)[-1]
    return PollerSettings(
        source_id=source_id, wait_seconds=q.wait_seconds, visibility_timeout=q.visibility_timeout,
        receivers=q.receivers, max_receivers=q.max_receivers, batch_size=b.batch_size,
        batch_seconds=b.batch_seconds, until_empty=b.until_empty, drain_wait_seconds=q.drain_wait_seconds,
        delete_attempts=b.delete_attempts, poison=p.action, poison_log_per_minute=p.log_per_minute,
        connect_timeout=q.connect_timeout_seconds,
        event_filter=EventFilter(frozenset(f.buckets), tuple(f.event_types),
                                 OwnLocations.of([config.changelog.uri, *f.lake])))


def dead_letter_queue(config: SourceConfig, queue: SqsQueue) -> SqsQueue:
    """Where `--poison dlq` moves poison messages: --dlq-url, else the queue's RedrivePolicy.

    Raises:
        ConfigError: neither names a DLQ.
    """
    if config.poison.dlq_url:
        return SqsQueue.from_config(config.poison.dlq_url, config.aws)
    dlq = queue.dead_letter_queue()
    if dlq is None:
        raise ConfigError([f"--poison dlq: expected a DLQ in the RedrivePolicy of {queue.queue_url} "
                           "or a --dlq-url, found neither"])
    log.info("poison messages are moved to %s", dlq.queue_url)
    return dlq


def run(config: SourceConfig) -> RunSummary:
    """Build the adapters and run the poller until drained, stopped or failed."""
    logs.setup(config.log.log_format, config.log.log_level)
    settings = poller_settings(config)
    check_locations({"--changelog": config.changelog.uri}, config.aws)
    if config.filter.any_bucket:
        log.warning("--any-bucket: events from every bucket are written (no --bucket allow-list)")
    queue = SqsQueue.from_config(config.queue.queue_url, config.aws)
    dlq = dead_letter_queue(config, queue) if settings.poison == "dlq" else None
    heart = config.metrics.heartbeat()
    poller = Poller(queue=queue, changelog=OpenDeltaChangelog(config.changelog.uri, config.aws),
                    settings=settings, dlq=dlq, beat=beating(heart))
    registry = registry_of(heart)
    registry.register(PollerCollector(poller.summary))
    registry.register(QueueDepthCollector(queue.depths))
    with serving(config.metrics, registry, heart, PROG), stop_on_signals(poller.stop, "after the open batch"):
        try:
            return poller.run()
        finally:
            logs.event(log, "summary", **dataclasses.asdict(poller.summary))


EVERY = (SourceConfig, StatusConfig, MaintainConfig)
"""Every command's settings: one --config-file serves them all (what none reads is refused)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `lakeinlet-poll` and of `spark-submit sources/__main__.py`."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["status"]:
        return status_main(args_list[1:])
    if args_list[:1] == ["maintain"]:
        return maintain_main(args_list[1:])
    parser = parsers()[None]
    return _guarded(lambda: run(resolve(SourceConfig, parser.parse_args(args_list), also=EVERY)), "poll")


def parsers() -> dict[str | None, argparse.ArgumentParser]:
    """The parser of each command: None (poll), `status`, `maintain` (the CLI reference's source)."""
    poll = build_parser(SourceConfig, None, __doc__ or "", usage=POLL_USAGE, epilog=commands_epilog())
    add_version_flag(poll)
    return {None: poll,
            "status": build_parser(StatusConfig, "status", status_main.__doc__ or "", usage=USAGES["status"]),
            "maintain": build_parser(MaintainConfig, "maintain", maintain_main.__doc__ or "",
                                     usage=USAGES["maintain"])}


def _guarded(body: Callable[[], object], what: str) -> int:
    try:
        body()
    except ConfigError as exc:
        logs.say(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except TerminalError as exc:
        logs.event(log, f"{what} failed", logging.ERROR, error=str(exc), kind=type(exc).__name__)
        return 2
    except Exception as exc:
        log.exception("%s failed unexpectedly: %s", what, exc)
        return 1
    return 0


def status_main(argv: Sequence[str]) -> int:
    """`lakeinlet-poll status`: queue depth, in-flight, DLQ depth and the changelog head."""
    parser = parsers()["status"]
    return _guarded(lambda: logs.say(status_text(resolve(StatusConfig, parser.parse_args(argv), also=EVERY))),
                    "status")



def maintain_main(argv: Sequence[str]) -> int:
    """`lakeinlet-poll maintain`: compact the changelog's small files (delta-rs optimize; the
change data feed skips the rewrite, so loaders read no row twice), write a log checkpoint, and
vacuum what compaction replaced once it is older than --retention-hours and no registered loader
(--loader-table for a Delta target, --loader-position for a Hudi or Iceberg one) can still read it:
every file that a version after the oldest loader position references stays. Prints files and
bytes before and after."""
    parser = parsers()["maintain"]

    def body() -> None:
        config = resolve(MaintainConfig, parser.parse_args(argv), also=EVERY)
        logs.setup(config.log.log_format, config.log.log_level)
        report = maintain(config.maintain, config.aws)
        if config.log.log_format == "json":
            logs.say(json.dumps(dataclasses.asdict(report), default=str))
        else:
            logs.say("\n".join(report.lines()))
    return _guarded(body, "maintain")


if __name__ == "__main__":
    raise SystemExit(main())
