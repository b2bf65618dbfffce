"""One loop for a single table and for routes (issue 37): a single table's --continuous run
tolerates as many failed drains and takes the same pauses as a route, and its periodic backfill
lists only its --prefix prefixes and outlives a failed listing."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

import pytest

from lakeinlet.incremental.bounds import Bounds
from lakeinlet.incremental.commands import between_drains
from lakeinlet.incremental.commands import run as run_command
from lakeinlet.incremental.commands.fanout import RouteRun
from lakeinlet.incremental.loader import Summary
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.settings import LoaderConfig, PlanSection, RunSection, TablesSection
from tests.fakes import FakeChangelog, FakeLedger, FakeReader, MemoryTarget, loaded_rows, make
from tests.unit.ticking import Ticking

pytestmark = pytest.mark.unit
CONTINUOUS = argparse.Namespace(drain=False, continuous=True)
FAILS = 7
"""More failed drains in a row than a single table's run used to tolerate (5)."""


class Flaky(FakeReader):
    """A reader whose first `fails` reads raise (a store cut off), each read noted at its time."""

    def __init__(self, fails: int, stop: Ticking) -> None:
        self.fails, self.stop, self.times = fails, stop, list[float]()

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any,
             heads: Any = None, single_pass: bool = False) -> ReadBatch:
        self.times.append(self.stop.now)
        if len(self.times) <= self.fails:
            raise OSError(f"connection reset ({len(self.times)})")
        return super().read(objs, batch_id, table_schema, heads, single_pass)


def failing_run(route: str) -> tuple[list[float], list[float], dict[str, int]]:
    """A --continuous run whose reader fails FAILS times: a single table (`route` ""), or route
    `route` beside a second route with nothing to load. Returns the read times, the pauses and
    the rows loaded."""
    changelog, target = FakeChangelog(), MemoryTarget()
    changelog.add("a", "b")
    stop = Ticking(until=lambda: loaded_rows(target))
    reader = Flaky(FAILS, stop)
    loader = make(changelog, target, FakeLedger(), reader=lambda: reader)
    parts = SimpleNamespace(config=LoaderConfig(run=RunSection(interval_seconds=10.0)),
                            loader=lambda: loader, register=lambda: None)
    if not route:
        assert run_command.cmd_run(parts, CONTINUOUS, stop, stop.clock) == 0  # type: ignore[arg-type]
    else:
        idle = make(FakeChangelog(), MemoryTarget(), FakeLedger())
        fan = run_command.loop(parts.config, [RouteRun(route, loader), RouteRun("idle", idle)], stop.clock)
        run_command.go(fan, [parts, parts], [(route, None)], CONTINUOUS, stop)  # type: ignore[list-item]
        assert not fan.failed()
    return reader.times, stop.pauses, dict(loaded_rows(target))


def test_a_single_table_and_a_route_follow_one_failure_policy() -> None:
    table, route = failing_run(""), failing_run("orders")
    times, pauses, rows = table
    assert len(times) == FAILS + 1 and rows == {"a": 1, "b": 1}  # every failure retried, then loaded
    assert set(pauses) == {10.0}  # a drain waiting for its retry still pauses by --interval-seconds
    assert [b - a for a, b in pairwise(times)] == [10, 20, 40, 80, 160, 300, 300]
    assert table == route  # the same retries at the same times, the same pauses


def backfilled(monkeypatch: pytest.MonkeyPatch, failures: int, drains: int) -> list[tuple[str, str]]:
    """The listings of a single table's --continuous run with --prefix orders/,sales/ and
    --backfill-every 1 over `drains` drains; its first `failures` listings fail."""
    listed: list[tuple[str, str]] = []

    def backfill(store: Any, changelog: Any, ledger: Any, bucket: str, prefix: str = "",
                 own: Any = None) -> None:
        listed.append((bucket, prefix))
        if len(listed) <= failures:
            raise OSError("ListObjectsV2: SlowDown")

    monkeypatch.setattr(between_drains.bf, "backfill", backfill)
    monkeypatch.setattr(between_drains, "bounds_of", lambda config: Bounds())
    config = LoaderConfig(tables=TablesSection(table="s3://lake/orders"),
                          plan=PlanSection(prefix=("orders/", "sales/")),
                          run=RunSection(backfill_every=1, backfill_bucket="land", interval_seconds=5.0))
    stop = Ticking(pauses_allowed=drains)
    parts = SimpleNamespace(config=config, loader=lambda: SimpleNamespace(drain=lambda **_: Summary()),
                            register=lambda: None, store=lambda: None, changelog=None, ledger=None)
    assert run_command.cmd_run(parts, CONTINUOUS, stop, stop.clock) == 0  # type: ignore[arg-type]
    return listed


def test_a_single_tables_periodic_backfill_lists_only_its_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert backfilled(monkeypatch, failures=0, drains=2) == [("land", "orders/"), ("land", "sales/")] * 2


def test_a_failed_listing_is_logged_and_the_next_period_lists_again(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "lakeinlet")
    listed = backfilled(monkeypatch, failures=1, drains=3)
    # the 1st drain's listing failed at its first prefix; the run went on and listed at the next two
    assert listed == [("land", "orders/"), *[("land", "orders/"), ("land", "sales/")] * 2]
    failed = [r for r in caplog.records if r.getMessage() == "backfill failed"]
    assert len(failed) == 1 and "SlowDown" in failed[0].lakeinlet_fields["error"]  # type: ignore[attr-defined]
