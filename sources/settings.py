"""Configuration of the event source (`lakeinlet-poll`): the field docs below generate `--help`."""

from __future__ import annotations

from dataclasses import dataclass, field

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.settings import MaintainSection
from lakeinlet.config import missing, setting
from lakeinlet.events import WANTED
from lakeinlet.logs import LogSection
from lakeinlet.metrics import MetricsSection
from lakeinlet.own import location


@dataclass(frozen=True)
class QueueSection:
    """The SQS queue S3 notifications arrive on, and how it is polled."""

    queue_url: str = setting("", "URL of the SQS queue that receives the S3 event notifications.",
                             metavar="URL", required=True)
    wait_seconds: int = setting(
        20, "Long-poll wait per receive call (0-20 s). A long poll returns as soon as a message "
        "arrives, so a shorter wait gains no latency; it only adds empty receives, each a billed "
        "request: an idle receiver makes one per wait (20 s: about 130,000 a month). 0 is short "
        "polling, which may report an empty queue while messages exist. With --until-empty, "
        "--drain-wait-seconds caps it.")
    visibility_timeout: int = setting(
        120, "Seconds a received message stays hidden. The heartbeat extends it while its batch "
        "is open or committing; if the process dies the messages come back after this long.")
    receivers: int = setting(
        4, "Receiver threads, each long-polling up to 10 messages a call into a shared buffer. "
        "More receivers drain a backlog faster; each idle one adds its own empty receives.")
    max_receivers: int = setting(
        16, "Most receivers a backlog may bring: while receives come back full and the changelog "
        "keeps up, the count doubles each second in which the last doubling raised the rate (over "
        "a slow network each call waits a round trip, however fast the server); back to "
        "--receivers at the first empty receive. --receivers or less: a fixed count.")
    drain_wait_seconds: int = setting(
        1, "With --until-empty: the long-poll wait of each receive when shorter than "
        "--wait-seconds (0-20 s). The run stops once every receiver has seen an empty receive "
        "after the last message, i.e. one to two such waits after the queue is empty, and commits "
        "the last batch at once. Longer: notifications still on their way are caught before the "
        "exit, which comes later; the few extra empty receives cost little.")

    connect_timeout_seconds: float = setting(
        60.0, "Give up when no receive has succeeded this many seconds after the start (a wrong "
        "endpoint or URL, a network that never came up): one error line, exit 2. Once a receive "
        "has succeeded, a lost connection is retried for ever (a long-running poller rides out "
        "an outage), with one log line a minute saying how many receives failed.")

    def validate(self) -> list[str]:
        problems = []
        if self.connect_timeout_seconds <= 0:
            problems.append(f"--connect-timeout-seconds: expected more than 0, found "
                            f"{self.connect_timeout_seconds}")
        if not self.queue_url:
            problems.append(missing("--queue-url"))
        elif not self.queue_url.startswith(("http://", "https://")):
            problems.append(f"--queue-url: expected https://sqs.<region>.amazonaws.com/<account>/<name>, "
                            f"found {self.queue_url!r}")
        if not 0 <= self.wait_seconds <= 20:
            problems.append(f"--wait-seconds: expected 0-20, found {self.wait_seconds}")
        if not 0 <= self.drain_wait_seconds <= 20:
            problems.append(f"--drain-wait-seconds: expected 0-20, found {self.drain_wait_seconds}")
        if not 1 <= self.visibility_timeout <= 43_200:
            problems.append(f"--visibility-timeout: expected 1-43200 s, found {self.visibility_timeout}")
        if not 1 <= self.receivers <= 64:
            problems.append(f"--receivers: expected 1-64, found {self.receivers}")
        if not 1 <= self.max_receivers <= 64:
            problems.append(f"--max-receivers: expected 1-64, found {self.max_receivers}")
        return problems


@dataclass(frozen=True)
class BatchSection:
    """Poll batches: one changelog commit per batch, then the batch's messages are deleted."""

    batch_size: int = setting(
        1000, "Close the batch after this many events (or messages). Bigger batches mean fewer, "
        "larger Delta commits and a faster changelog for the loader to plan over.")
    batch_seconds: float = setting(
        10.0, "Close the batch this many seconds after its first message, however small it is: "
        "the upper bound on how late an event reaches the changelog. Shorter: lower latency, but "
        "more and smaller commits (Delta versions for the loader to plan over, small files).")
    until_empty: bool = setting(
        False, "Drain and stop: exit once every receiver has seen an empty receive (of at most "
        "--drain-wait-seconds) after the last message; the last partial batch is then committed "
        "at once, without waiting --batch-seconds. Without it, poll until SIGTERM/SIGINT.")
    delete_attempts: int = setting(
        3, "Attempts for a delete entry that failed on the server side, and rounds of deletes again "
        "(kept hidden, pausing 1 s, 2 s, …) for a committed batch whose delete call failed: a drain "
        "(--until-empty) ends only after them. After that the message is left to come back (its "
        "event is recognisable by event_id, so nothing is duplicated).")

    def validate(self) -> list[str]:
        problems = []
        if self.batch_size < 1:
            problems.append(f"--batch-size: expected at least 1, found {self.batch_size}")
        if self.batch_seconds <= 0:
            problems.append(f"--batch-seconds: expected more than 0, found {self.batch_seconds}")
        if self.delete_attempts < 1:
            problems.append(f"--delete-attempts: expected at least 1, found {self.delete_attempts}")
        return problems


@dataclass(frozen=True)
class FilterSection:
    """Which events become rows. Events filtered out are acknowledged and counted, not written."""

    buckets: tuple[str, ...] = setting(
        (), "Bucket allow-list (repeat the flag or separate with commas): required, or --any-bucket. "
        "Events from other buckets are never written; they are acknowledged (retrying cannot make "
        "them acceptable, and parking them in the DLQ would hide real poison) and logged with the "
        "bucket name.", flag="--bucket", metavar="BUCKET")
    any_bucket: bool = setting(
        False, "Accept events from every bucket instead of a --bucket allow-list: the queue policy "
        "is then the only gate, and anyone who may send to the queue chooses what the loader reads.")
    lake: tuple[str, ...] = setting(
        (), "lakeinlet's lake roots (tables, ledgers, quarantine, archives) whose events are never "
        "written, as s3://bucket/prefix (repeat the flag or separate with commas). They are "
        "acknowledged, counted as `own`, and named by one log line a minute: a notification that "
        "covers the lake would otherwise feed the changelog its own commits. The --changelog "
        "location always is.", flag="--lake", metavar="URI")
    event_types: tuple[str, ...] = setting(
        WANTED, "Event-name prefixes to keep, e.g. ObjectCreated: or ObjectRemoved:Delete. "
        "Others (and s3:TestEvent) are acknowledged without rows. ObjectRemoved and "
        "LifecycleExpiration (a lifecycle rule's deletion, which ObjectRemoved leaves out) rows are "
        "removals, which the loader's --on-delete remove-rows applies; ObjectCreated rows are loads.",
        flag="--event-type", metavar="PREFIX")

    def validate(self) -> list[str]:
        # A notification configuration's name (s3:ObjectCreated:*) matches no record's eventName
        # (ObjectCreated:Put): every event would be acknowledged with no row.
        problems = [f"--event-type {t}: expected an event-name prefix as records carry it, e.g. "
                    f"{t.removeprefix('s3:').rstrip('*')}" for t in self.event_types
                    if t.startswith("s3:") or "*" in t]
        if not self.buckets and not self.any_bucket:
            problems.append("--bucket: expected one or more buckets whose events are written (or "
                            "--any-bucket to write every bucket's), found neither")
        elif self.buckets and self.any_bucket:
            problems.append(f"--any-bucket: expected without --bucket, found --bucket "
                            f"{','.join(self.buckets)}")
        return problems + [f"--lake {uri}: expected s3://bucket[/prefix] (a local path names no S3 "
                           "event)" for uri in self.lake if location(uri) is None]


@dataclass(frozen=True)
class PoisonSection:
    """Poison messages: queue messages that are not S3 events (a broken sender, a wrong topic)."""

    action: str = setting(
        "redrive", "What becomes of a poison message. `redrive`: it stays in the queue until SQS's "
        "redrive policy moves it to the DLQ after maxReceiveCount receives, one visibility timeout "
        "apart (5 x 120 s by default), so --until-empty may exit while it is in flight. `dlq`: the "
        "poller sends it to the DLQ at once (body and message attributes as received, the parse "
        "error added as the `lakeinlet.poison_error` attribute; SQS gives it a new message id) and "
        "only then deletes it from the queue; a failed send leaves it in the queue to be tried "
        "again, and --until-empty waits for it. Needs sqs:SendMessage on the DLQ (and "
        "sqs:GetQueueUrl without --dlq-url).", flag="--poison", choices=("dlq", "redrive"))
    dlq_url: str | None = setting(
        None, "With --poison dlq: the queue poison messages are moved to (default: the DLQ named "
        "by the queue's RedrivePolicy).", metavar="URL")
    log_per_minute: int = setting(
        10, "Poison log lines a minute at most: each poison message gets a line (message id, "
        "receive count, error) until then; the next line, or one at the end of the run, says how "
        "many were suppressed.", flag="--poison-log-per-minute", metavar="N")

    def validate(self) -> list[str]:
        problems = []
        if self.dlq_url is not None and not self.dlq_url.startswith(("http://", "https://")):
            problems.append(f"--dlq-url: expected https://sqs.<region>.amazonaws.com/<account>/<name>, "
                            f"found {self.dlq_url!r}")
        if self.log_per_minute < 1:
            problems.append(f"--poison-log-per-minute: expected at least 1, found {self.log_per_minute}")
        return problems


@dataclass(frozen=True)
class ChangelogSection:
    """The changelog table (Delta): one row per object event, one commit per poll batch."""

    uri: str = setting("", "Changelog table: a local path or s3://bucket/prefix (s3a:// accepted).",
                       flag="--changelog", metavar="URI", required=True)
    source_id: str | None = setting(
        None, "Name of this source in the commit metadata (default: the queue name).")

    def validate(self) -> list[str]:
        return [] if self.uri else [missing("--changelog")]


@dataclass(frozen=True)
class SourceConfig:
    """Everything `lakeinlet-poll` needs."""

    queue: QueueSection = field(default_factory=QueueSection)
    batch: BatchSection = field(default_factory=BatchSection)
    filter: FilterSection = field(default_factory=FilterSection)
    poison: PoisonSection = field(default_factory=PoisonSection)
    changelog: ChangelogSection = field(default_factory=ChangelogSection)
    aws: AwsSection = field(default_factory=AwsSection)
    log: LogSection = field(default_factory=LogSection)
    metrics: MetricsSection = field(default_factory=MetricsSection)

    def validate(self) -> list[str]:
        problems = []
        if self.batch.batch_seconds >= self.queue.visibility_timeout:
            problems.append(f"--batch-seconds ({self.batch.batch_seconds}) must be below "
                            f"--visibility-timeout ({self.queue.visibility_timeout}) so a batch "
                            "commits before its messages come back")
        if self.poison.dlq_url and self.poison.action != "dlq":
            problems.append(f"--dlq-url: only used with --poison dlq, found --poison {self.poison.action}")
        return problems


@dataclass(frozen=True)
class StatusSection:
    """What `lakeinlet-poll status` inspects."""

    queue_url: str = setting("", "URL of the SQS queue to report on.", metavar="URL", required=True)
    changelog: str | None = setting(None, "Changelog table whose head version and time to report.",
                                    metavar="URI")
    json: bool = setting(False, "Print one JSON object (keys: docs/reference/status-json.md) instead "
                               "of `key value` lines; --log-format json does too.")

    def validate(self) -> list[str]:
        return [] if self.queue_url else [missing("--queue-url")]


@dataclass(frozen=True)
class StatusConfig:
    """Everything `lakeinlet-poll status` needs."""

    status: StatusSection = field(default_factory=StatusSection)
    aws: AwsSection = field(default_factory=AwsSection)
    log: LogSection = field(default_factory=LogSection)


@dataclass(frozen=True)
class MaintainConfig:
    """Everything `lakeinlet-poll maintain` needs."""

    maintain: MaintainSection = field(default_factory=MaintainSection)
    aws: AwsSection = field(default_factory=AwsSection)
    log: LogSection = field(default_factory=LogSection)
