"""The unrouted ledger forgets an object once a route has loaded it (delta-rs ledgers, no Spark)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import FILTERED, LOADED, UNROUTED, Outcome, PlannedObject
from lakeinlet.incremental.unrouted import pruner

pytestmark = pytest.mark.unit
NOW = datetime(2026, 11, 22, tzinfo=UTC)


def outcome(key: str, status: str, etag: str = "e1") -> Outcome:
    return Outcome(PlannedObject("b", key, etag, None, 10, f"id-{key}-{etag}", NOW, 0), status, "")


def statuses(ledger: DeltaLedger) -> list[tuple[str, str, str]]:
    rows = ledger.read(["key", "identity", "status"]).to_pylist()
    return sorted((r["key"], r["identity"], r["status"]) for r in rows)


def test_an_object_a_later_route_loaded_leaves_the_unrouted_record(tmp_path: Path) -> None:
    """Issue 36: the unrouted ledger kept listing objects a route added later had loaded."""
    record = DeltaLedger(str(tmp_path / "unrouted_ledger"), AwsSection(), "app")
    unrouted = [outcome(k, UNROUTED) for k in ("all/a", "all/b", "x/c", "all/d", "it's/q")]
    record.append([*unrouted, outcome("tmp/e", FILTERED)], 0, "u0")
    route = DeltaLedger(str(tmp_path / "route_ledger"), AwsSection(), "app")
    route.append([outcome("all/a", LOADED), outcome("all/b", LOADED, etag="e2"),  # another version
                  outcome("all/d", "corrupt"), outcome("it's/q", LOADED)], 3, "r3")
    prune = pruner(record, [route])
    prune()
    assert statuses(record) == [("all/b", "e1", UNROUTED), ("tmp/e", "e1", FILTERED), ("x/c", "e1", UNROUTED)]
    assert record.last_target_version() == 0  # the record's own checkpoint of the ledger is kept
    table = record._table()
    assert table is not None
    version = table.version()
    prune()  # nothing more to forget: no commit
    assert table.version() == version
