"""The loader's bounds: which objects may be read at all, whatever the filters select. Keys that
Hadoop's `Path` would read as another key, buckets off `--bucket` or named as S3 never names one,
and lakeinlet's own tables are set aside (`filtered`, with a reason) before any HEAD or read."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lakeinlet.incremental.model import FILTERED
from lakeinlet.incremental.plan import KeyFilter, Verdict
from lakeinlet.own import OwnLocations, location

VALID_BUCKET = re.compile(r"^[a-zA-Z0-9.\-_]{1,255}$")
"""botocore's rule for a bucket name (it allows the legacy us-east-1 names S3 still serves): a name
outside it is refused by every S3 call, so its object can never be read."""


def rewritten(key: str) -> str | None:
    """Why Hadoop's `Path` would read another key than `key` (it drops `.` and `..` segments,
    doubled, leading and trailing slashes); None when it reads `key` itself."""
    if not key:
        return "empty key: S3 has no such object"
    segments = key.split("/")
    bad = next((i for i, s in enumerate(segments) if s in ("", ".", "..")), None)
    if bad is None:
        return None
    seg = segments[bad]
    what = (f"a `{seg}` segment" if seg else "a leading `/`" if bad == 0
            else "a trailing `/`" if bad == len(segments) - 1 else "an empty segment (`//`)")
    read = posixpath.normpath("/" + key).lstrip("/")
    return (f"key with {what}: Hadoop's Path would read `{read}` instead, so it is never read "
            "(upload it under a key without it to load it)")


@dataclass(frozen=True)
class Bounds:
    """The allowed buckets (empty: any) and lakeinlet's own locations."""

    buckets: frozenset[str] = frozenset()
    own: OwnLocations = field(default_factory=OwnLocations)

    def verdict(self, bucket: str, key: str) -> str | None:
        """Why `bucket/key` is out of bounds, or None when it may be read."""
        if not VALID_BUCKET.match(bucket):
            return (f"invalid bucket name {bucket!r}: S3 has no bucket so named (a forged or "
                    "corrupted event); nothing to load")
        if (loc := self.own.owner(bucket, key)) is not None:
            return f"lakeinlet's own table {loc}: never loaded nor cleaned up (lakeinlet writes there)"
        if self.buckets and bucket not in self.buckets:
            return (f"bucket not in --bucket ({', '.join(sorted(self.buckets))}): add {bucket} to "
                    "--bucket to load its objects")
        return rewritten(key)


@dataclass(frozen=True)
class Bounded:
    """A key filter whose objects out of `bounds` are set aside first (`filtered`, with the reason)."""

    inner: KeyFilter
    bounds: Bounds

    def owns(self, key: str) -> bool:
        return self.inner.owns(key)

    def verdict(self, bucket: str, key: str) -> Verdict | None:
        why = self.bounds.verdict(bucket, key)
        return (FILTERED, why) if why else self.inner.verdict(bucket, key)


def bounds_of(config: Any) -> Bounds:
    """The bounds a loader configuration sets: its `--bucket` list (with the periodic backfill's
    bucket) and every location lakeinlet writes to: its own tables and `--lake` (where `routes_of`
    and `unrouted_config` put the other routes' tables)."""
    buckets = config.plan.buckets
    if buckets and config.run.backfill_bucket:
        buckets = (*buckets, config.run.backfill_bucket)
    return Bounds(frozenset(buckets), OwnLocations.of([*written(config), *config.plan.lake]))


def written(config: Any) -> Iterable[str | None]:
    """Where a run with `config` writes: the changelog, its table with its ledger, quarantine,
    cleanup log and staged copies (`read.staging`), and the archive of --after-load."""
    t, spec = config.tables, config.cleanup.spec
    ledger = t.ledger_uri.rstrip("/")
    yield from (t.changelog, t.table, t.ledger_uri, t.quarantine_uri, ledger + "_cleanup",
                ledger + "_staging")
    if spec.bucket:
        yield f"s3://{spec.bucket}/{spec.prefix}"


def knowing(config: Any, others: Iterable[Any]) -> Any:
    """`config` with the S3 locations the `others` configurations write to added to its --lake (a
    route's loader and cleanup then never take another route's files for data)."""
    extra = [u for c in others for u in written(c) if u and location(u) is not None]
    lake = tuple(dict.fromkeys((*config.plan.lake, *extra)))
    return dataclasses.replace(config, plan=dataclasses.replace(config.plan, lake=lake))
