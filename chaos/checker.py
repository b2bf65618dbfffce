"""The checker: expected target rows from what was uploaded, compared with what the target holds.
Pure (no I/O): the manifest is the truth, `Observed` is what a run left (see `observed`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from chaos.workload import UploadedVersion

LOST, DUPLICATED, PARTIAL = "lost", "duplicated", "partial"
UNEXPECTED, MISLABELLED = "unexpected", "mislabelled"
MISSING_EVENT, LEFT_IN_QUEUE, LEFT_IN_DLQ = "missing_event", "left_in_queue", "left_in_dlq"
FATAL = (LOST, DUPLICATED, PARTIAL, UNEXPECTED, MISLABELLED, MISSING_EVENT, LEFT_IN_QUEUE, LEFT_IN_DLQ)


@dataclass(frozen=True)
class Observed:
    """What a run left: target rows (order_id, _source_key, _source_etag), created events in the
    changelog as (key, etag), and messages left in the queue and the DLQ."""

    rows: Sequence[tuple[int, str, str]]
    changelog: set[tuple[str, str]]
    queue_left: int = 0
    dlq_left: int = 0


@dataclass(frozen=True)
class Finding:
    """One violation: its kind, the object key it concerns ('' for the queues) and the details."""

    kind: str
    key: str
    detail: str


@dataclass
class CheckReport:
    """Row counts and every violation found."""

    expected: int = 0
    """Rows that must be present exactly once (the newest version of every object)."""
    found: int = 0
    lost: int = 0
    duplicated: int = 0
    """Extra copies: a row present n > 1 times adds n - 1."""
    unexpected: int = 0
    """Rows of no uploaded version, or whose lineage names another object or version."""
    old_versions_loaded: int = 0
    """Overwritten versions present (allowed: loaded before the overwrite), whole and once."""
    missing_events: int = 0
    queue_left: int = 0
    dlq_left: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def kinds(self) -> Counter[str]:
        return Counter(f.kind for f in self.findings)


def check(versions: Sequence[UploadedVersion], observed: Observed) -> CheckReport:
    """Compare the target, the changelog and the queues with the uploaded versions.

    The rule is lakeinlet's documented behaviour for append-only ingest: the newest version of
    every object is present exactly once; an older version is present at most once and whole (it
    was loaded iff its event reached the loader before the overwrite); no row appears twice; every
    row belongs to an uploaded version and names that version's object and etag. Every notified
    version has an event in the changelog (no message lost on the way), as has the newest version
    of every object that only a backfill could see; nothing is left in the queue or the DLQ. A
    duplicate is as fatal as a loss (Kafka's transactions test and Jepsen's total-queue checker
    are the models).
    """
    report = CheckReport(found=len(observed.rows), queue_left=observed.queue_left, dlq_left=observed.dlq_left)
    counts = Counter(order_id for order_id, _, _ in observed.rows)
    by_key: dict[str, list[UploadedVersion]] = {}
    for v in versions:
        by_key.setdefault(v.key, []).append(v)
    for history in by_key.values():
        history.sort(key=lambda v: v.version)
        _check_newest(report, history[-1], counts)
        for old in history[:-1]:
            _check_older(report, old, counts)
        _check_events(report, history, observed.changelog)
    _check_lineage(report, versions, observed.rows)
    _check_queues(report, observed)
    return report


def _check_newest(report: CheckReport, v: UploadedVersion, counts: Counter[int]) -> None:
    report.expected += len(v.order_ids)
    missing = [i for i in v.order_ids if counts[i] == 0]
    if missing:
        report.lost += len(missing)
        report.findings.append(Finding(LOST, v.key, f"newest version {v.version} (etag {v.etag}): "
                                                    f"{len(missing)} of {len(v.order_ids)} rows absent"))
    _check_copies(report, v, counts)


def _check_older(report: CheckReport, v: UploadedVersion, counts: Counter[int]) -> None:
    present = [i for i in v.order_ids if counts[i] > 0]
    if present and len(present) < len(v.order_ids):
        report.lost += len(v.order_ids) - len(present)
        report.findings.append(Finding(PARTIAL, v.key, f"overwritten version {v.version} (etag "
                                                       f"{v.etag}): {len(present)} of "
                                                       f"{len(v.order_ids)} rows present"))
    elif present:
        report.old_versions_loaded += 1
    _check_copies(report, v, counts)


def _check_copies(report: CheckReport, v: UploadedVersion, counts: Counter[int]) -> None:
    extra = sum(counts[i] - 1 for i in v.order_ids if counts[i] > 1)
    if extra:
        report.duplicated += extra
        report.findings.append(Finding(DUPLICATED, v.key, f"version {v.version} (etag {v.etag}): "
                                                          f"{extra} extra copies of its rows"))


def _check_events(report: CheckReport, history: list[UploadedVersion],
                  changelog: set[tuple[str, str]]) -> None:
    """Each notified version has its event; an un-notified key's newest version its backfill's."""
    wanted = [v for v in history if v.notified] or history[-1:]
    for v in wanted:
        if (v.key, v.etag) not in changelog:
            report.missing_events += 1
            how = "notification" if v.notified else "backfill event"
            report.findings.append(Finding(MISSING_EVENT, v.key, f"version {v.version} (etag {v.etag}): "
                                                                 f"its {how} is not in the changelog"))


def _check_lineage(report: CheckReport, versions: Sequence[UploadedVersion],
                   rows: Sequence[tuple[int, str, str]]) -> None:
    owner = {i: v for v in versions for i in v.order_ids}
    for order_id, key, etag in rows:
        v = owner.get(order_id)
        if v is None:
            report.unexpected += 1
            report.findings.append(Finding(UNEXPECTED, key, f"row {order_id} belongs to no uploaded version"))
        elif (key, etag) != (v.key, v.etag):
            report.unexpected += 1
            report.findings.append(Finding(MISLABELLED, v.key, f"row {order_id} of version {v.version} "
                                                               f"(etag {v.etag}) is labelled {key!r} "
                                                               f"etag {etag}"))


def _check_queues(report: CheckReport, observed: Observed) -> None:
    if observed.queue_left:
        report.findings.append(Finding(LEFT_IN_QUEUE, "", f"{observed.queue_left} messages left in the "
                                                          "queue"))
    if observed.dlq_left:
        report.findings.append(Finding(LEFT_IN_DLQ, "", f"{observed.dlq_left} messages in the DLQ"))
