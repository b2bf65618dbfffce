"""Backfill: list a bucket prefix, diff against the changelog and the ledger, and append synthetic
events for objects the notifications missed, so the normal load path picks them up (once)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import FINAL
from lakeinlet.incremental.ports import ListedObject, ObjectStorePort

EVENT_NAME = "ObjectCreated:Backfill"
Ref = tuple[str, str, str]


@dataclass(frozen=True)
class BackfillPlan:
    listed: int
    missing: tuple[ListedObject, ...]

    @property
    def bytes(self) -> int:
        return sum(o.size for o in self.missing)

    def lines(self) -> list[str]:
        out = [f"  {o.key}  {o.size} bytes  etag {o.etag}" for o in self.missing]
        return [*out, f"{len(self.missing)} objects, {self.bytes} bytes to add "
                      f"(of {self.listed} listed)"]


def diff(listed: Iterable[ListedObject], known: set[Ref], since: datetime | None) -> BackfillPlan:
    """Listed objects (modified at/after `since`) whose (bucket, key, etag) nobody knows."""
    count, missing = 0, []
    for o in listed:
        count += 1
        if since is not None and o.last_modified < since:
            continue
        if (o.bucket, o.key, o.etag or "") not in known:
            missing.append(o)
    return BackfillPlan(count, tuple(missing))


def known_refs(changelog: DeltaChangelog, ledger: DeltaLedger, bucket: str, prefix: str) -> set[Ref]:
    """(bucket, key, etag) of created events in the changelog and of final ledger rows."""
    refs: set[Ref] = set()
    dt = changelog.table()
    if dt is not None:
        cond = (pc.field("bucket") == bucket) & pc.starts_with(pc.field("key"), prefix)
        tab = dt.to_pyarrow_dataset().to_table(columns=["bucket", "key", "etag", "event_name"], filter=cond)
        created = tab.filter(pc.starts_with(tab.column("event_name"), "ObjectCreated"))
        refs |= _refs(created, "etag")
    led = ledger.read(["bucket", "key", "identity", "status"])
    led = led.filter(pc.is_in(led.column("status"), pa.array(sorted(FINAL))))
    return refs | _refs(led.filter(pc.equal(led.column("bucket"), bucket)), "identity")


def _refs(table: pa.Table, ident: str) -> set[Ref]:
    cols = [table.column(c).to_pylist() for c in ("bucket", "key", ident)]
    return {(b, k, (e or "").strip('"')) for b, k, e in zip(*cols, strict=True)}


def synthetic_events(objs: Sequence[ListedObject]) -> list[ReceivedEvent]:
    batch = "backfill-" + uuid.uuid4().hex[:12]
    now = datetime.now(UTC)
    return [ReceivedEvent(ObjectEvent(o.bucket, o.key, EVENT_NAME, o.last_modified, o.size, o.etag,
                                      envelope="backfill"), f"{batch}-{i}", now, batch)
            for i, o in enumerate(objs)]


def backfill(store: ObjectStorePort, changelog: DeltaChangelog, ledger: DeltaLedger, bucket: str,
             prefix: str = "", since: datetime | None = None, dry_run: bool = False) -> BackfillPlan:
    """Plan the backfill and, unless `dry_run`, append its events as one changelog commit."""
    plan = diff(store.list(bucket, prefix), known_refs(changelog, ledger, bucket, prefix), since)
    if plan.missing and not dry_run:
        events = synthetic_events(plan.missing)
        changelog.append(events, {"source": "backfill", "poll_batch": events[0].poll_batch,
                                  "bucket": bucket, "prefix": prefix})
    return plan
