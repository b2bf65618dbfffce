"""Judging each object of a read: the single-object reads some checks need (`probes`) run here,
and `checks` turns what was read into verdicts, returned to the reader."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lakeinlet.incremental.model import FILTERED, PlannedObject, Ref
from lakeinlet.incremental.ports import Footer, ObjectHead
from lakeinlet.incremental.read import checks, probes, schema_hints, sniff
from lakeinlet.incremental.read.checks import Seen
from lakeinlet.incremental.read.probes import Opener
from lakeinlet.incremental.read.verdicts import Failed


def problems(opener: Opener, objs: Sequence[PlannedObject], seen: Mapping[Ref, Seen],
             heads: Mapping[Ref, ObjectHead], footers: Mapping[Ref, Footer]) -> Failed:
    """Objects whose rows must not be committed, with status and reason."""
    failed: Failed = {}
    for o in objs:
        ref, s = (o.bucket, o.key), seen.get((o.bucket, o.key))
        if s is not None and (why := checks.changed_since_head(s, heads.get(ref))):
            failed[ref] = (FILTERED, why)
        elif s is not None and s.unhinted:
            failed[ref] = schema_hints.verdict(s.unhinted, opener.uri(o),
                                               opener.settings.on_type_conflict == "fail")
        elif (s is None or not s.rows) and o.size and \
                (status := no_rows(opener, o, s, getattr(heads.get(ref), "first", None))):
            failed[ref] = status
    if opener.settings.source_format != "parquet":
        return failed
    failed |= checks.beyond_footer([o for o in objs if (o.bucket, o.key) not in failed], seen, footers)
    return failed | checks.short_of_footer(seen, promised_rows(
        opener, [o for o in objs if (o.bucket, o.key) not in failed and (o.bucket, o.key) in seen], footers))


def no_rows(opener: Opener, o: PlannedObject, s: Seen | None,
            first: bytes | None = None) -> tuple[str, str] | None:
    """An object with bytes but no rows: what its `first` bytes are, and its read alone, strictly,
    to name what is wrong (`checks.no_rows`)."""
    found = sniff.what_it_is(first, o.key, opener.multiline) if first else None
    alone = probes.parsed_alone(opener, o) if checks.read_alone_first(s, found) else None
    return checks.no_rows(s, found, alone)


def promised_rows(opener: Opener, objs: Sequence[PlannedObject], footers: Mapping[Ref, Footer]
                  ) -> dict[Ref, int]:
    """The rows each object's footer promises: the footers read before the read (ranged GETs,
    If-Match the HEAD's etag), else counted by Spark (footers only)."""
    promised = {(o.bucket, o.key): f.rows for o in objs if (f := footers.get((o.bucket, o.key)))}
    return promised | probes.spark_footer_rows(opener, [o for o in objs if (o.bucket, o.key) not in promised])
