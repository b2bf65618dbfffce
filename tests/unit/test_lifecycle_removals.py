"""A lifecycle rule's expiration, from each envelope's sample through the changelog row to the
loader: with --on-delete remove-rows the expired object's rows are deleted, as a DeleteObject's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lakeinlet.changelog.schema import to_changelog_table
from lakeinlet.events import ReceivedEvent
from lakeinlet.incremental.plan import Caps
from lakeinlet.sources.envelopes import parse
from tests.fakes import EVENTS, T0, FakeChangelog, FakeLedger, FakeStore, MemoryTarget, loaded_rows, make

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
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    changelog.versions.append([expiration_of("a", sample, 1)])
    store = FakeStore({"a": 10, "b": 10})
    loader = make(changelog, target, ledger, store=store, caps=Caps(10, 10**6, split_removals=True))
    summary = loader.drain(max_batches=1)
    del store.objects["a"]  # expired after its load (the removal's HEAD finds nothing)
    summary.add(loader.drain())
    assert loaded_rows(target) == {"b": 1}, f"expected a's rows deleted by its expiration ({sample})"
    assert summary.statuses["removed"] == 1 and summary.removed_rows == 1, summary


def test_append_only_records_an_expiration_without_loading_the_object_again() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("b")
    changelog.versions.append([expiration_of("a", SAMPLES[0], 1)])
    make(changelog, target, ledger).drain()
    assert {o.obj.key: o.status for _, o in ledger.rows} == {"a": "filtered", "b": "loaded"}


@pytest.mark.parametrize(("name", "still_there", "removed"), [
    ("ObjectRemoved:Delete", True, False),  # an old version deleted: the current one's rows stay
    ("LifecycleExpiration:Delete", True, False),  # a noncurrent version expired
    ("ObjectRemoved:Delete", False, True),  # the last version deleted: nothing left of the key
    ("ObjectRemoved:DeleteMarkerCreated", False, True),  # the key is hidden: its rows go
    ("ObjectRemoved:DeleteMarkerCreated", True, False),  # yet HEAD finds it: late or forged
])
def test_a_deleted_version_removes_rows_only_when_the_key_has_no_current_version(
        name: str, still_there: bool, removed: bool) -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(), FakeLedger()
    changelog.add("a", "b")
    row = changelog._row(1, 0, "a", True) | {"event_name": name, "version_id": "v-old"}
    changelog.versions.append([row])
    store = FakeStore({"b": 10} | ({"a": 10} if still_there else {}))
    make(changelog, target, ledger, store=store, caps=Caps(10, 10**6, split_removals=True)).drain()
    assert loaded_rows(target) == ({"b": 1} if removed else {"a": 1, "b": 1})
    status = {o.obj.key: o.status for _, o in ledger.rows if o.obj.event_name == name}
    assert status == {"a": "removed" if removed else "filtered"}
