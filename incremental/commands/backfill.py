"""Backfill: list a bucket prefix, diff against the changelog and the ledger, and append synthetic
events for objects the notifications missed, so the normal load path picks them up (once)."""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.errors import TerminalError
from lakeinlet.events import ObjectEvent, ReceivedEvent
from lakeinlet.incremental.archived import IDENTITY_META
from lakeinlet.incremental.bounds import bounds_of
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.model import FINAL, PlannedObject, VersionRef
from lakeinlet.incremental.ports import ListedObject, ObjectStorePort
from lakeinlet.logs import say
from lakeinlet.own import OwnLocations

EVENT_NAME = "ObjectCreated:Backfill"


@dataclass(frozen=True)
class BackfillPlan:
    listed: int
    missing: tuple[ListedObject, ...]
    own: int = 0
    """Listed objects under lakeinlet's own locations: never appended."""
    archived: int = 0
    """Unknown objects whose HEAD found an archived copy's mark: never appended."""

    @property
    def bytes(self) -> int:
        return sum(o.size for o in self.missing)

    def lines(self) -> list[str]:
        out = [f"  {o.key}  {o.size} bytes  etag {o.etag}" for o in self.missing]
        own = f"; {self.own} under lakeinlet's own tables left out" if self.own else ""
        if self.archived:
            own += (f"; {self.archived} archived copies (x-amz-meta-{IDENTITY_META}, written by "
                    "--after-load archive) left out")
        return [*out, f"{len(self.missing)} objects, {self.bytes} bytes to add "
                      f"(of {self.listed} listed{own})"]


def diff(listed: Iterable[ListedObject], known: set[VersionRef], since: datetime | None,
         own: OwnLocations | None = None) -> BackfillPlan:
    """Listed objects (modified at/after `since`) whose (bucket, key, etag) nobody knows, leaving
    out those under lakeinlet's `own` locations."""
    count, owned, missing = 0, 0, []
    for o in listed:
        count += 1
        if own is not None and own.owner(o.bucket, o.key) is not None:
            owned += 1
        elif (since is None or o.last_modified >= since) and (o.bucket, o.key, o.etag or "") not in known:
            missing.append(o)
    return BackfillPlan(count, tuple(missing), owned)


def without_archived(plan: BackfillPlan, store: ObjectStorePort) -> BackfillPlan:
    """`plan` without the archived copies among its objects. A listing carries no metadata, so each
    object to append is HEADed: one request per object the loader would HEAD anyway, and the only
    sure sign of another table's archive (this loader's own archive is left out by location)."""
    if not plan.missing:
        return plan
    heads = store.head_many([_planned(o) for o in plan.missing])
    keep = tuple(o for o in plan.missing if not getattr(heads.get((o.bucket, o.key)), "archive_of", None))
    return replace(plan, missing=keep, archived=len(plan.missing) - len(keep))


def _planned(o: ListedObject) -> PlannedObject:
    return PlannedObject(o.bucket, o.key, o.etag, None, o.size, "backfill-head", o.last_modified, -1)


def known_refs(changelog: DeltaChangelog, ledger: DeltaLedger, bucket: str, prefix: str) -> set[VersionRef]:
    """(bucket, key, etag) of created events in the changelog and of final ledger rows."""
    refs: set[VersionRef] = set()
    dt = changelog.table()
    if dt is not None:
        cond = (pc.field("bucket") == bucket) & pc.starts_with(pc.field("key"), prefix)
        tab = dt.to_pyarrow_dataset().to_table(columns=["bucket", "key", "etag", "event_name"], filter=cond)
        created = tab.filter(pc.starts_with(tab.column("event_name"), "ObjectCreated"))
        refs |= _refs(created, "etag")
    led = ledger.read(["bucket", "key", "identity", "status"])
    led = led.filter(pc.is_in(led.column("status"), pa.array(sorted(FINAL))))
    return refs | _refs(led.filter(pc.equal(led.column("bucket"), bucket)), "identity")


def _refs(table: pa.Table, ident: str) -> set[VersionRef]:
    cols = [table.column(c).to_pylist() for c in ("bucket", "key", ident)]
    return {(b, k, (e or "").strip('"')) for b, k, e in zip(*cols, strict=True)}


def synthetic_events(objs: Sequence[ListedObject]) -> list[ReceivedEvent]:
    batch = "backfill-" + uuid.uuid4().hex[:12]
    now = datetime.now(UTC)
    return [ReceivedEvent(ObjectEvent(o.bucket, o.key, EVENT_NAME, o.last_modified, o.size, o.etag,
                                      envelope="backfill"), f"{batch}-{i}", now, batch)
            for i, o in enumerate(objs)]


def backfill(store: ObjectStorePort, changelog: DeltaChangelog, ledger: DeltaLedger, bucket: str,
             prefix: str = "", since: datetime | None = None, dry_run: bool = False,
             own: OwnLocations | None = None) -> BackfillPlan:
    """Plan the backfill and, unless `dry_run`, append its events as one changelog commit (never
    one for an object under lakeinlet's `own` locations)."""
    plan = diff(store.list(bucket, prefix), known_refs(changelog, ledger, bucket, prefix), since, own)
    plan = without_archived(plan, store)
    if plan.missing and not dry_run:
        events = synthetic_events(plan.missing)
        changelog.append(events, {"source": "backfill", "poll_batch": events[0].poll_batch,
                                  "bucket": bucket, "prefix": prefix})
    return plan


def command(parts: Any, since: datetime | None, dry_run: bool) -> list[str]:
    """`lakeinlet-load backfill`: each --prefix of each --bucket listed and backfilled; the lines
    to print.

    Raises:
        TerminalError: no --bucket to list.
    """
    plan = parts.config.plan
    if not plan.buckets:
        raise TerminalError("backfill: give --bucket BUCKET, the bucket to list (repeatable); the "
                            "same --bucket lets `run` load what the backfill appends")
    own, lines, found = bounds_of(parts.config).own, [], 0
    for bucket in plan.buckets:
        for prefix in plan.prefix or ("",):
            done = backfill(parts.store(), parts.changelog, parts.ledger, bucket, prefix, since, dry_run, own)
            lines += done.lines()
            found += len(done.missing)
    return [*lines, f"dry run: nothing changed ({found} synthetic events would be appended)" if dry_run
            else f"appended {found} synthetic events to the changelog"]


def cmd_backfill(parts: Any, args: argparse.Namespace) -> int:
    """`backfill`: the lines of `command` printed."""
    say("\n".join(command(parts, args.since, args.dry_run)))
    return 0
