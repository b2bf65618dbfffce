"""Freshness: the watermark each target commit records (newest event time, changelog version), how
it is read back, and how `status`, `checkpoint show` and `lakeinlet.observe` state it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.commands.status import shown, status_lines
from lakeinlet.incremental.model import (
    FILTERED,
    LOADED,
    RESET,
    Checkpoint,
    Outcome,
    PlannedObject,
    Position,
    TargetCommit,
    Watermark,
)
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.observe import frames as observe
from tests.fakes import T0, FakeChangelog, FakeLedger, MemoryTarget, make
from tests.targets import commit

pytestmark = pytest.mark.unit
APP = "app"
AWS = AwsSection()


def outcome(key: str, at: datetime, status: str = LOADED) -> Outcome:
    return Outcome(PlannedObject("b", key, "e", None, 10, f"id-{key}", at, 0), status, "", 2)


def read_back(meta: dict[str, str], version: int = 1, app_id: str = APP) -> TargetCommit:
    """A commit as an adapter reads it back: the metadata prefixed as written, then unprefixed."""
    return TargetCommit(version, T0, tc.unprefixed(tc.prefixed(meta | {"app_id": app_id})))


def test_a_load_records_the_newest_event_of_every_planned_object_decided_ones_too() -> None:
    outcomes = [outcome("a", T0), outcome("gone", T0 + timedelta(minutes=3), FILTERED),
                outcome("b", T0 + timedelta(minutes=1))]
    meta = tc.load_meta(APP, "b1", Position(-1), Position(4, 2), outcomes)
    assert read_back(meta).watermark == Watermark(T0 + timedelta(minutes=3), 4)
    assert meta["newest_event_time"] == "2026-11-01T00:03:00+00:00"


def test_outcomes_kept_outside_the_commit_still_set_its_watermark() -> None:
    meta = tc.load_meta(APP, "b1", Position(-1), Position(2), None, covers=[outcome("a", T0)])
    assert "outcomes" not in meta and read_back(meta).watermark == Watermark(T0, 2)


def test_the_watermark_never_goes_back_to_an_older_batch() -> None:
    newer = Watermark(T0 + timedelta(hours=1), 3)
    backfilled = tc.load_meta(APP, "b2", Position(3), Position(4), [outcome("old", T0)], previous=newer)
    assert read_back(backfilled).watermark == Watermark(newer.event_time, 4)
    fresher = tc.load_meta(APP, "b3", Position(4), Position(5), [outcome("n", T0 + timedelta(hours=2))],
                           previous=newer)
    assert read_back(fresher).watermark == Watermark(T0 + timedelta(hours=2), 5)


def test_a_batch_that_planned_no_object_keeps_the_event_time_and_moves_the_version() -> None:
    meta = tc.load_meta(APP, "b4", Position(5), Position(6), [], previous=Watermark(T0, 5))
    assert read_back(meta).watermark == Watermark(T0, 6)
    assert read_back(tc.load_meta(APP, "b0", Position(-1), Position(0), [])).watermark == Watermark(None, 0)


def test_a_position_commit_keeps_the_event_time_and_follows_the_checkpoint() -> None:
    meta = tc.position_meta(APP, Position(7), Position(2), "replay", RESET, previous=Watermark(T0, 7))
    assert read_back(meta).watermark == Watermark(T0, 2)
    first = tc.position_meta(APP, None, Position(9), "first run", previous=None)
    assert read_back(first).watermark == Watermark(None, 9)


def test_naive_event_times_are_taken_as_utc() -> None:
    meta = tc.load_meta(APP, "b1", Position(-1), Position(0), [outcome("a", datetime(2026, 11, 1, 5))])
    assert read_back(meta).watermark == Watermark(datetime(2026, 11, 1, 5, tzinfo=UTC), 0)


def test_reading_back_skips_compactions_other_loaders_and_commits_without_one() -> None:
    ours = read_back(tc.load_meta(APP, "b1", Position(-1), Position(0), [outcome("a", T0)]), 1)
    later = [outcome("z", T0 + timedelta(1))]
    theirs = read_back(tc.load_meta("other", "x", Position(-1), Position(5), later), 3, "other")
    compaction = TargetCommit(4, T0, {"operation": "compact"})
    unmarked = TargetCommit(5, T0, {})
    older_loader = replace(read_back(tc.load_meta(APP, "b2", Position(0), Position(1), [])), version=2)
    older_loader = replace(older_loader, meta={k: v for k, v in older_loader.meta.items()
                                               if k not in ("newest_event_time", "changelog_version")})
    newest_first = [unmarked, compaction, theirs, older_loader, ours]
    found = tc.checkpoint_from(newest_first, APP, 5)
    assert found.position == Position(1) and found.watermark == Watermark(T0, 0)
    assert tc.watermark_from(newest_first, APP) == Watermark(T0, 0)
    assert tc.watermark_from(newest_first, "other") == Watermark(T0 + timedelta(1), 5)


def test_newest_watermark_reads_the_newest_commit_alone_first() -> None:
    ours = read_back(tc.load_meta(APP, "b1", Position(-1), Position(0), [outcome("a", T0)]), 1)
    asked: list[int | None] = []

    def commits(history: list[TargetCommit]) -> Any:
        def read(limit: int | None) -> list[TargetCommit]:
            asked.append(limit)
            return history[:limit]
        return read

    assert tc.newest_watermark(commits([ours]), APP) == Watermark(T0, 0) and asked == [1]
    asked.clear()
    assert tc.newest_watermark(commits([TargetCommit(2, T0, {}), ours]), APP) == Watermark(T0, 0)
    assert asked == [1, None]


def test_a_drain_records_the_newest_event_and_keeps_it_through_older_ones() -> None:
    changelog, target, ledger = FakeChangelog(), MemoryTarget(app_id=APP), FakeLedger()
    changelog.add("a", "b", "nowhere")  # `nowhere` is not in the store: decided missing, newest event
    make(changelog, target, ledger).drain()
    assert target.checkpoint().watermark == Watermark(T0 + timedelta(seconds=2), 0)
    changelog.add("c")  # an older event time, in a later changelog version
    make(changelog, target, ledger).drain()
    assert target.checkpoint().watermark == Watermark(T0 + timedelta(seconds=2), 1)


@pytest.mark.parametrize(("seconds", "text"), [(0, "0 s"), (59.9, "59 s"), (61, "1 min 1 s"),
                                                (7325, "2 h 2 min"), (90061, "1 d 1 h"), (-5, "0 s")])
def test_ages_read_as_people_say_them(seconds: float, text: str) -> None:
    assert ck.age(seconds) == text


# ---- status and checkpoint show ---------------------------------------------------------------

def changelog(tmp: Path, versions: int) -> DeltaChangelog:
    cl = DeltaChangelog(str(tmp / "changelog"))
    for v in range(versions):
        ev = ObjectEvent("b", f"k{v}", "ObjectCreated:Put", T0, 10, f"e{v}")
        cl.append([ReceivedEvent(ev, f"m{v}", T0, f"p{v}")], {"poll_batch": f"p{v}"})
    return cl


def parts(target: Any, cl: DeltaChangelog) -> Any:
    """What `status_lines` reads of a job's parts (no queue URL: no SQS client is made)."""
    return SimpleNamespace(config=None, target=target, changelog=cl, catalog_line=lambda: None,
                           filters_line=lambda: None)


def loaded_target(tmp: Path, end: int, at: datetime) -> DeltaTarget:
    target = DeltaTarget(str(tmp / "t"), AWS, APP)
    commit(target, NOTHING_READ, Position(-1), Position(end), "b1", [outcome("k0", at)])
    return target


def test_status_states_freshness_beside_the_lag(tmp_path: Path) -> None:
    cl, at = changelog(tmp_path, 3), datetime(2026, 11, 26, 20, 1, 2, tzinfo=UTC)
    lines = status_lines(parts(loaded_target(tmp_path, 0, at), cl), None, None, at + timedelta(seconds=252))
    lag = next(i for i, line in enumerate(lines) if line.startswith("lag: 2 versions, 2 events"))
    assert lines[lag].startswith("lag: 2 versions, 2 events (20 B), ")  # two 10-byte objects
    assert lines[lag + 1] == ("freshness: 4 min 12 s (newest event loaded 2026-11-26T20:01:02+00:00, "
                              "changelog version 0)")


def test_caught_up_still_states_the_age_of_the_newest_event(tmp_path: Path) -> None:
    cl, at = changelog(tmp_path, 1), datetime(2026, 11, 26, 20, 1, 2, tzinfo=UTC)
    view = ck.show(loaded_target(tmp_path, 0, at), cl, at + timedelta(hours=3, minutes=4))
    assert "lag: 0 versions, 0 events, 0 s" in view.lines()
    assert view.lines()[3] == ("freshness: 3 h 4 min (newest event loaded 2026-11-26T20:01:02+00:00, "
                               "changelog version 0); caught up, nothing pending")


def test_freshness_is_unknown_until_a_commit_records_it(tmp_path: Path) -> None:
    cl = changelog(tmp_path, 1)
    assert ck.show(MemoryTarget(app_id=APP), cl).freshness_line().startswith(
        "freshness: unknown (no commit of this loader records it yet")
    started = MemoryTarget(app_id=APP)
    started.commit_position(None, Position(0), "first run: --on-missing-checkpoint latest")
    assert ck.show(started, cl).freshness_line() == (
        "freshness: unknown (no event loaded yet, changelog version 0)")


# ---- lakeinlet.observe -------------------------------------------------------------------------

def test_status_row_has_freshness_beside_lag() -> None:
    mark = Watermark(T0, 4)
    view = ck.CheckpointView(Checkpoint(Position(4), 9, T0, mark), 6, (), 2, 7, 30.04, 125.06)
    row = observe.status_row(view)
    assert row == {"checkpoint": "4", "head": 6, "lag_versions": 2, "lag_events": 7, "lag_bytes": 0,
                   "lag_seconds": 30.0,
                   "newest_event_time": T0, "changelog_version": 4, "freshness_seconds": 125.1}
    blank = observe.status_row(ck.CheckpointView(Checkpoint(None, -1), 0, (), 1, 1, 0.0))
    assert (blank["newest_event_time"], blank["changelog_version"], blank["freshness_seconds"]) == (
        None, None, None)


def test_freshness_frame_reads_a_tables_watermark(tmp_path: Path) -> None:
    cl = changelog(tmp_path, 2)
    loaded_target(tmp_path, 0, T0)
    frame = observe.freshness_frame(str(tmp_path / "t"), cl.uri, AWS, app_id=APP)
    assert frame[["table", "checkpoint", "lag_events", "changelog_version"]].values.tolist() == [
        [str(tmp_path / "t"), "0", 1, 0]]
    assert frame["newest_event_time"][0] == T0 and frame["freshness_seconds"][0] > 0


def test_every_changelog_commit_records_the_bytes_its_events_announce(tmp_path: Path) -> None:
    """Both ways a changelog commit is written (delta-rs's first, the blind appender's after)."""
    cl = OpenDeltaChangelog(str(tmp_path / "changelog"))
    for v, sizes in enumerate(([10, 5], [7], [None, 3])):
        events = [ObjectEvent("b", f"k{v}-{i}", "ObjectCreated:Put", T0, s, "e") for i, s in enumerate(sizes)]
        cl.append([ReceivedEvent(e, f"m{v}-{i}", T0, f"p{v}") for i, e in enumerate(events)], {})
    assert [c.bytes for c in cl.commits()] == [15, 7, 3]


@pytest.mark.parametrize("uri", ["lake/t", "./lake/t", "s3a://b/lake/t", "s3://b/lake/t"])
def test_status_shows_every_target_in_one_form(uri: str, tmp_path: Path, monkeypatch: Any) -> None:
    """Before: Delta's relative path as given, Hudi's absolute, Iceberg's `s3a://`."""
    monkeypatch.chdir(tmp_path)
    want = f"{tmp_path}/lake/t" if "://" not in uri else "s3://b/lake/t"
    assert shown(uri) == want


def test_status_prints_a_relative_delta_table_absolute(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    cl, at = changelog(tmp_path, 1), datetime(2026, 11, 26, 20, 1, 2, tzinfo=UTC)
    target = DeltaTarget("t", AWS, APP)
    commit(target, NOTHING_READ, Position(-1), Position(0), "b1", [outcome("k0", at)])
    assert f"target:    {tmp_path}/t" in status_lines(parts(target, cl), None, None, at)
