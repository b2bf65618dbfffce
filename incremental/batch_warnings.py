"""The console's warnings after a committed batch: objects set aside, malformed records
quarantined, rows loaded with U+FFFD (the ledger holds every one; the console names a few)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from lakeinlet import logs
from lakeinlet.incremental.model import Outcome
from lakeinlet.incremental.ports import REPLACED

log = logging.getLogger(__name__)
SET_ASIDE_SHOWN = 5
"""Objects named per batch and per warning on the console (the ledger holds every one)."""
LEDGER = "the ledger (lakeinlet-load status)"


def warn(outcomes: Sequence[Outcome], aside: Sequence[Outcome]) -> None:
    """Name the set-aside objects, those with quarantined records and those with U+FFFD (each event
    name written out: the log-events reference is read from these calls)."""
    quarantined = [o for o in outcomes if o.bad_records]
    replaced = [o for o in outcomes if REPLACED in o.reason]
    for o in aside[:SET_ASIDE_SHOWN]:
        logs.event(log, "set aside", level=logging.WARNING, object=_uri(o), status=o.status,
                   reason=o.reason[:300])
    if (more := len(aside) - SET_ASIDE_SHOWN) > 0:
        logs.event(log, "set aside", level=logging.WARNING, more=more, where=LEDGER)
    for o in quarantined[:SET_ASIDE_SHOWN]:
        logs.event(log, "malformed records quarantined", level=logging.WARNING, object=_uri(o),
                   records=o.bad_records)
    if (more := len(quarantined) - SET_ASIDE_SHOWN) > 0:
        logs.event(log, "malformed records quarantined", level=logging.WARNING, more=more,
                   where="the quarantine table")
    for o in replaced[:SET_ASIDE_SHOWN]:
        logs.event(log, "undecodable bytes loaded as U+FFFD", level=logging.WARNING, object=_uri(o),
                   reason=o.reason[:300])
    if (more := len(replaced) - SET_ASIDE_SHOWN) > 0:
        logs.event(log, "undecodable bytes loaded as U+FFFD", level=logging.WARNING, more=more, where=LEDGER)


def _uri(o: Outcome) -> str:
    return f"s3://{o.obj.bucket}/{o.obj.key}"
