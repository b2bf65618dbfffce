"""The unrouted record kept true: an object a route loaded since (a route added or widened, then a
reset) leaves the unrouted ledger, so whoever reads that ledger sees only objects no route took."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pyarrow.compute as pc

from lakeinlet.incremental.commands.fanout import UNROUTED as UNROUTED_RUN
from lakeinlet.incremental.commands.fanout import RouteRun
from lakeinlet.incremental.model import UNROUTED, PlannedObject, VersionRef
from lakeinlet.incremental.plan import Unrouted
from lakeinlet.logs import event

log = logging.getLogger(__name__)


class Record(Protocol):
    """The unrouted ledger as pruning uses it."""

    def read(self, columns: list[str] | None = None) -> Any: ...

    def forget(self, refs: set[VersionRef], status: str) -> None: ...


class RouteLedger(Protocol):
    def known(self, objs: Sequence[PlannedObject]) -> set[VersionRef]: ...


def routed_since(record: Record, ledgers: Sequence[RouteLedger]) -> set[VersionRef]:
    """The refs the record lists `unrouted` that a route's ledger holds in a final status."""
    rows = record.read(["bucket", "key", "identity", "status", "event_time", "event_id"])
    rows = rows.filter(pc.equal(rows.column("status"), UNROUTED)).to_pylist()
    if not rows:
        return set()
    objs = [PlannedObject(r["bucket"], r["key"], r["identity"], None, 0, r["event_id"], r["event_time"], -1)
            for r in rows]
    refs = {(r["bucket"], r["key"], r["identity"]) for r in rows}
    found: set[VersionRef] = set()
    for ledger in ledgers:
        found |= {(b, k, i) for b, k, i in ledger.known(objs)} & refs
    return found


def pruner(record: Record, ledgers: Sequence[RouteLedger]) -> Callable[[], None]:
    """What the unrouted record's run does after each of its batches and its first drain (it alone
    writes the record, so the delete races none of its appends). A failure is logged: the next
    batch tries again."""
    def prune() -> None:
        try:
            found = routed_since(record, ledgers)
            if found:
                record.forget(found, UNROUTED)
                event(log, "unrouted record amended", forgotten=len(found))
        except Exception as exc:
            event(log, "unrouted record not amended", level=logging.WARNING,
                  error=f"{type(exc).__name__}: {exc}"[:500])
    return prune


def unrouted_run(record: Any, parts: Sequence[Any], every: Sequence[Any]) -> RouteRun:
    """The run that records the keys none of `every` route selects (`record`: its `Parts`), and
    forgets those the routes of `parts` have loaded since."""
    collector = record.loader(Unrouted(tuple(r.filters for r in every)))
    return RouteRun(UNROUTED_RUN, collector, after_batch=pruner(record.ledger, [p.ledger for p in parts]))
