"""The campaign's checker on hand-made outcomes: each violation is found, and only violations."""

from __future__ import annotations

import pytest

from chaos.checker import (
    DUPLICATED,
    LEFT_IN_DLQ,
    LEFT_IN_QUEUE,
    LOST,
    MISLABELLED,
    MISSING_EVENT,
    PARTIAL,
    UNEXPECTED,
    Observed,
    check,
)
from chaos.workload import UploadedVersion

pytestmark = pytest.mark.unit


def version(key: str, n: int, v: int = 0, notified: bool = True) -> UploadedVersion:
    ids = tuple(n * 100 + v * 10 + i for i in range(3))
    return UploadedVersion(key, n, v, f"etag-{n}-{v}", 30, ids, 1000.0 + n + v, notified)


A, B = version("in/a", 1), version("in/b", 2)
B1 = version("in/b", 2, 1)
Q0, Q1 = version("quiet/q", 3, notified=False), version("quiet/q", 3, 1, notified=False)
ALL = [A, B, B1, Q0, Q1]
EVENTS = {(v.key, v.etag) for v in (A, B, B1, Q1)}


def rows(*versions: UploadedVersion) -> list[tuple[int, str, str]]:
    return [(i, v.key, v.etag) for v in versions for i in v.order_ids]


def test_newest_versions_once_and_nothing_else_is_clean() -> None:
    report = check(ALL, Observed(rows(A, B1, Q1), EVENTS))
    assert report.ok, report.findings
    assert (report.expected, report.found, report.lost, report.duplicated) == (9, 9, 0, 0)
    assert report.old_versions_loaded == 0


def test_an_overwritten_version_loaded_once_and_whole_is_allowed() -> None:
    report = check(ALL, Observed(rows(A, B, B1, Q0, Q1), EVENTS))
    assert report.ok, report.findings
    assert (report.found, report.old_versions_loaded) == (15, 2)


def test_a_missing_newest_version_is_lost() -> None:
    report = check(ALL, Observed(rows(A, B, Q1), EVENTS))
    assert report.kinds() == {LOST: 1}
    assert report.lost == 3 and report.findings[0].key == "in/b"


def test_one_row_twice_is_a_duplicate_even_of_an_old_version() -> None:
    twice = rows(A, B1, Q1) + rows(A)[:1] + rows(B) + rows(B)[:1]
    report = check(ALL, Observed(twice, EVENTS))
    assert report.kinds() == {DUPLICATED: 2}
    assert report.duplicated == 2


def test_part_of_an_old_version_is_partial() -> None:
    report = check(ALL, Observed(rows(A, B1, Q1) + rows(B)[:2], EVENTS))
    assert report.kinds() == {PARTIAL: 1}
    assert report.lost == 1


def test_rows_of_no_version_and_rows_under_another_version_are_unexpected() -> None:
    stray = [(999, "in/x", "etag-x")]
    relabelled = [(i, B.key, B.etag) for i in B1.order_ids]  # new bytes under the old identity
    report = check(ALL, Observed(rows(A, Q1) + stray + relabelled, EVENTS))
    assert report.kinds() == {UNEXPECTED: 1, MISLABELLED: 3}
    assert report.unexpected == 4


def test_every_notified_version_needs_its_event_and_a_quiet_key_its_newest() -> None:
    report = check(ALL, Observed(rows(A, B1, Q1), EVENTS - {(B.key, B.etag), (Q1.key, Q1.etag)}))
    assert sorted(f.key for f in report.findings) == ["in/b", "quiet/q"]
    assert report.kinds() == {MISSING_EVENT: 2}


def test_messages_left_in_the_queue_or_the_dlq_fail_the_check() -> None:
    report = check(ALL, Observed(rows(A, B1, Q1), EVENTS, queue_left=2, dlq_left=1))
    assert report.kinds() == {LEFT_IN_QUEUE: 1, LEFT_IN_DLQ: 1}
