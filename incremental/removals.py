"""--on-delete remove-rows: which removal events may delete their key's rows. An event is not
trusted on its own word: a removal older than the version loaded, or of a key that is still there,
removes nothing (rows are matched by key, so it would delete the current version's rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from lakeinlet.incremental.model import FILTERED, Outcome, PlannedObject, Ref
from lakeinlet.incremental.ports import ObjectHead, Unreadable


def judge(objs: Sequence[PlannedObject], heads: Mapping[Ref, ObjectHead | Unreadable | None],
          loaded: Mapping[Ref, datetime]) -> tuple[list[PlannedObject], list[Outcome]]:
    """The removals to apply, and the outcomes of those that leave the key's rows alone.

    Args:
        heads: a HEAD of each removal's key, made after the event.
        loaded: the event time of the version whose rows are in the target, per key loaded.
    """
    apply, kept = [], []
    for o in objs:
        where = (o.bucket, o.key)
        why = kept_because(o, heads.get(where), loaded.get(where))
        if why is None:
            apply.append(o)
        else:
            kept.append(Outcome(o, FILTERED, why))
    return apply, kept


def kept_because(o: PlannedObject, head: ObjectHead | Unreadable | None,
                 loaded_at: datetime | None) -> str | None:
    """Why the removal event `o` removes no rows (None: its key's rows are removed). Events are
    ordered by event time: the ledger keeps no sequencer of the version loaded."""
    uri, event = f"s3://{o.bucket}/{o.key}", f"{o.event_name or 'removal'} at {o.event_time.isoformat()}"
    if loaded_at is not None and o.event_time < loaded_at:
        return (f"{event} is older than the version loaded (event at {loaded_at.isoformat()}): a late "
                "or forged removal removes nothing; the loaded rows stay")
    if isinstance(head, ObjectHead):
        if o.deletes_one_version:
            return (f"version {o.version_id} was deleted but the key still has a current version, "
                    "whose rows stay")
        return (f"{event}, but {uri} is still there (etag {head.etag}, modified "
                f"{head.last_modified.isoformat() if head.last_modified else 'unknown'}): a late or "
                "forged removal removes nothing; its rows stay")
    if isinstance(head, Unreadable) and not head.gone:
        return (f"{event}, but a HEAD of {uri} could not tell whether it is gone ({head.reason}); "
                "its rows stay until a removal can be checked")
    return None
