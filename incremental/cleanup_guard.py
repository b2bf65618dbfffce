"""Source cleanup's last guards: never an object lakeinlet must not touch (its own tables, a bucket
off --bucket, whatever the ledger says), and never on a store that ignores conditional deletes (the
overwrite safety of an unversioned delete rests on If-Match), probed once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from lakeinlet.errors import TerminalError

PROBE_PREFIX = "_lakeinlet/"
"""Where the probe writes in a source bucket when the cleanup log is not on S3 (a hidden folder)."""


class Prober(Protocol):
    def honours_if_match(self, bucket: str, key: str) -> bool:
        """Whether a DeleteObject of a scratch object written at bucket/key, If-Match another
        etag, is refused (412); the scratch object is removed either way."""
        ...


@dataclass
class Guard:
    """What one cleanup (one table or route) refuses; the store is probed on its first deleting pass."""

    refuse: Callable[[str, str], str | None] = lambda bucket, key: None
    """Why an object must never be archived or deleted (lakeinlet's own, off --bucket), or None."""
    probe_at: tuple[str, str] | None = None
    """The bucket and prefix the probe writes under (the cleanup log's folder); None: PROBE_PREFIX in
    the bucket of the first object to clean up."""
    _refusal: str | None = field(default=None, init=False)
    _probed: bool = field(default=False, init=False)

    def check_store(self, store: Prober, source_bucket: str, action: str) -> None:
        """Probe the store once (later calls repeat the first answer).

        Raises:
            TerminalError: the store deleted despite a wrong If-Match.
        """
        if not self._probed:
            bucket, prefix = self.probe_at or (source_bucket, PROBE_PREFIX)
            key = f"{prefix}probe-conditional-delete-{uuid.uuid4().hex[:12]}"
            if not store.honours_if_match(bucket, key):
                self._refusal = (
                    f"--after-load {action} refused: the store ignores conditional deletes (a DeleteObject "
                    f"of s3://{bucket}/{key} with a wrong If-Match deleted it instead of answering 412), "
                    "so a cleanup could delete an object overwritten since its load; use a store that "
                    "honours If-Match, or --after-load off")
            self._probed = True
        if self._refusal:
            raise TerminalError(self._refusal)
