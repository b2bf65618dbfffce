"""What the HEAD before the read decides about an object: gone, empty, too large, overwritten since
its event, or an archived copy; None when it is read."""

from __future__ import annotations

from lakeinlet.incremental.archived import archived_reason
from lakeinlet.incremental.model import FILTERED, LOADED, MISSING, TOO_LARGE, Outcome, PlannedObject
from lakeinlet.incremental.ports import ObjectHead, Unreadable


def head_outcome(obj: PlannedObject, head: ObjectHead | Unreadable | None, max_bytes: int) -> Outcome | None:
    """The outcome `head` decides for `obj`, or None when `obj` is to be read."""
    if head is None or isinstance(head, Unreadable):
        return Outcome(obj, head.status if head else MISSING,
                       head.reason if head else "object not found (deleted before the load)")
    if head.archive_of:
        return Outcome(obj, FILTERED, archived_reason(obj.bucket, obj.key, head.archive_of))
    if head.size == 0:
        return Outcome(obj, LOADED, "zero-byte object: nothing to read")
    if head.size > max_bytes:
        return Outcome(obj, TOO_LARGE, f"{head.size} bytes > --max-bytes {max_bytes}")
    want = (obj.etag or "").strip('"')
    if want and head.etag and want != head.etag:
        return Outcome(obj, FILTERED, f"object overwritten since this event (etag {want} → "
                                      f"{head.etag}); the newer version's event loads it")
    return None
