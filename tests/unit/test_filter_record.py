"""The filters a checkpoint was made under, recorded beside it: a widened filter is said at start and
in `status` until a reset re-reads the versions planned under the narrower one (delta-rs, no Spark)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.filter_record import FilterRecord, Gap, gap_of
from lakeinlet.incremental.model import Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import NOTHING_READ
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.incremental.transform_settings import TransformSection
from lakeinlet.incremental.wiring import Parts
from tests.targets import commit

pytestmark = pytest.mark.unit
NOW = datetime(2026, 11, 22, tzinfo=UTC)
ORDERS = FilterRecord(prefix=("orders/",))


@pytest.mark.parametrize(("now", "said"), [
    (FilterRecord(prefix=("orders/", "all/")), ["--prefix orders/ → orders/, all/"]),
    (FilterRecord(), ["--prefix orders/ → (any)"]),
    (FilterRecord(prefix=("orders/2026/",)), []),  # narrower: nothing the changelog holds is missed
    (FilterRecord(("b",), ("orders/",)), []),
    (FilterRecord(prefix=("orders/",), suffix=(".json",)), []),
    (FilterRecord(prefix=("orders/",), regex="x"), []),
])
def test_what_a_new_filter_selects_beyond_the_recorded_one(now: FilterRecord, said: list[str]) -> None:
    assert ORDERS.widened(now) == said
    old = FilterRecord(("b",), ("o/",), (".json",), r"\d", ("o/tmp/",))
    assert old.widened(FilterRecord(("b", "c"), ("o/",), (".json", ".csv"), r"\w", ())) == [
        "--bucket b → b, c", "--suffix .json → .json, .csv", "--regex \\d → \\w",
        "--ignore-prefix o/tmp/ → (any)"]
    assert FilterRecord.from_json(old.to_json()) == old
    assert FilterRecord.from_json('{"format": 99}') is None


def test_a_widened_filter_is_said_until_a_reset_rereads_its_versions(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 36: a route's prefix changed; objects under the new prefix in earlier changelog versions
    were skipped without a word at start or in `status`."""
    cl = DeltaChangelog(str(tmp_path / "changelog"))
    for v in range(4):
        ev = ObjectEvent("b", f"all/k{v}", "ObjectCreated:Put", NOW, 10, f"e{v}")
        cl.append([ReceivedEvent(ev, f"m{v}", NOW, f"p{v}")], {"poll_batch": f"p{v}"})
    target = DeltaTarget(str(tmp_path / "t"), AwsSection(), "app")
    plan = SimpleNamespace(buckets=(), prefix=("orders/",), suffix=(), regex=None, ignore_prefix=(),
                           include_glob=(), exclude_glob=(), include_hidden=False)
    config = SimpleNamespace(plan=plan, transform=TransformSection())
    parts = Parts(config, cl, None, None, target, route="orders")
    assert parts.record_filters() is None  # a new table: nothing planned yet
    batch(target, Position(-1), Position(1), "o1")
    assert gap_of(target.checkpoint(), ORDERS) is None
    parts.config.plan.prefix = ("orders/", "all/")
    with caplog.at_level(logging.WARNING):
        gap = parts.record_filters()
    assert gap == Gap(1, "--prefix orders/ → orders/, all/")
    line = gap.line("orders")
    assert line.startswith("route orders: filters changed (--prefix orders/ → orders/, all/) after "
                           "changelog versions 0-1 were planned")
    assert "checkpoint reset --route orders --to-version 0" in line
    assert [r.getMessage() for r in caplog.records] == ["filters changed"]  # one line at start
    batch(target, Position(1), Position(3), "o2")  # the next batch records the new filters and the gap
    assert parts.filters_line() == f"filters:   {line}"  # `status` says it still
    target.stamp = tc.NO_STAMP  # `checkpoint reset` records no filters
    ck.apply_reset(target, ck.plan_reset(target, cl, ck.resolve(cl, 0, None), "reload all/"), "reload all/")
    assert target.checkpoint().position == Position(-1)
    assert parts.record_filters() is None and parts.filters_line() is None


def batch(target: DeltaTarget, start: Position, end: Position, key: str) -> None:
    obj = PlannedObject("b", key, "e", None, 10, f"id-{key}", NOW, 0)
    commit(target, NOTHING_READ, start, end, f"batch-{key}", [Outcome(obj, "loaded", "", 3)])
