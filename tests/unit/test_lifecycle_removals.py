"""A lifecycle rule's expiration, from each envelope's sample through the changelog row to the
loader: with --on-delete remove-rows the expired object's rows are deleted, as a DeleteObject's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lakeinlet.changelog.schema import to_changelog_table
from lakeinlet.events import ReceivedEvent
from lakeinlet.incremental.plan import Caps
from lakeinlet.sources.envelopes import parse
from tests.fakes import EVENTS, T0, FakeChangelog, FakeLedger, FakeTarget, loaded_rows, make

pytestmark = pytest.mark.unit

SAMPLES = ["s3_lifecycle_expiration.json", "sns_wrapped_lifecycle_delete_marker.json",
           "eventbridge_lifecycle_expiration.json"]


def expiration_of(key: str, sample: str, version: int) -> dict[str, object]:
    """The changelog record the poller writes for `sample`, about object `key` of bucket `b`."""
    (event,) = parse((EVENTS / sample).read_text(encoding="utf-8")).events
    row = to_changelog_table([ReceivedEvent(replace(event, bucket="b", key=key), "m1", T0, "p1")])
    return row.to_pylist()[0] | {"_commit_version": version}


@pytest.mark.parametrize("sample", SAMPLES)
def test_an_expired_objects_rows_are_removed(sample: str) -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("a", "b")
    changelog.versions.append([expiration_of("a", sample, 1)])
    summary = make(changelog, target, ledger, caps=Caps(10, 10**6, split_removals=True)).drain()
    assert loaded_rows(target) == {"b": 1}, f"expected a's rows deleted by its expiration ({sample})"
    assert summary.statuses["removed"] == 1 and summary.removed_rows == 1, summary


def test_append_only_records_an_expiration_without_loading_the_object_again() -> None:
    changelog, target, ledger = FakeChangelog(), FakeTarget(), FakeLedger()
    changelog.add("b")
    changelog.versions.append([expiration_of("a", SAMPLES[0], 1)])
    make(changelog, target, ledger).drain()
    assert {o.obj.key: o.status for _, o in ledger.rows} == {"a": "filtered", "b": "loaded"}
