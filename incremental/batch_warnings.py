"""The console's warnings after a committed batch: objects set aside, malformed records
quarantined, rows loaded with U+FFFD (the ledger holds every one; the console names a few)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from lakeinlet import logs
from lakeinlet.incremental.model import Outcome
from lakeinlet.incremental.ports import REPLACED

log = logging.getLogger("lakeinlet.loader")
SET_ASIDE_SHOWN = 5
"""Objects named per batch and per warning on the console (the ledger holds every one)."""


def warn(outcomes: Sequence[Outcome], aside: Sequence[Outcome]) -> None:
    """Name the set-aside objects, those with quarantined records and those with U+FFFD."""
    _named("set aside", aside, "the ledger (lakeinlet-load status)",
           lambda o: {"status": o.status, "reason": o.reason[:300]})
    _named("malformed records quarantined", [o for o in outcomes if o.bad_records],
           "the quarantine table", lambda o: {"records": o.bad_records})
    _named("undecodable bytes loaded as U+FFFD", [o for o in outcomes if REPLACED in o.reason],
           "the ledger (lakeinlet-load status)", lambda o: {"reason": o.reason[:300]})


def _named(what: str, found: Sequence[Outcome], where: str,
           fields: Callable[[Outcome], dict[str, Any]]) -> None:
    for o in found[:SET_ASIDE_SHOWN]:
        logs.event(log, what, level=logging.WARNING, object=f"s3://{o.obj.bucket}/{o.obj.key}", **fields(o))
    if len(found) > SET_ASIDE_SHOWN:
        logs.event(log, what, level=logging.WARNING, more=len(found) - SET_ASIDE_SHOWN, where=where)
