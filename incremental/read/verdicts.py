"""What judging a read returns: each object set aside with its status and reason, and a bulk read's
frame with the objects in it (the reader combines these values; no check mutates another's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeinlet.incremental.model import PlannedObject, Ref

Failed = dict[Ref, tuple[str, str]]
"""(bucket, key) → (ledger status, reason) of the objects that are not loaded."""
Planned = dict[str, tuple[int, int]]
"""Files as a read's plan holds them (their `_metadata`): path URI → (size, mtime in ms)."""


@dataclass(frozen=True)
class Loaded:
    """A bulk read: its DataFrame (None: nothing left to read), the objects it reads, the objects
    set aside on the way, and the files its plan holds when the read built that plan itself."""

    df: Any
    objs: list[PlannedObject]
    failed: Failed = field(default_factory=dict)
    planned: Planned = field(default_factory=dict)
