"""What the Hudi target's `stage` hands `publish`, and whether this process's Spark lets `stage`
write a batch's rows (one pass)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from lakeinlet.incremental.model import Outcome, Position
from lakeinlet.incremental.targets.hudi import one_pass
from lakeinlet.logs import event

if TYPE_CHECKING:
    from lakeinlet.incremental.targets.hudi.target import HudiTarget


@dataclass
class Staged:
    """A commit to make: rows (or none) and the Hudi operation that writes them with `meta`; a
    one-pass batch's was made by `stage` (`version`), or refused by its check (`rejected`)."""

    outcomes: list[Outcome]
    start: Position
    meta: dict[str, str]
    data: Any
    schema: pa.Schema | None
    operation: str
    extra: dict[str, str] | None = None
    version: int | None = None
    rejected: str | None = None
    roll_back: Callable[[], None] | None = None

    def discard(self) -> None:
        """Roll back the instant a refused one-pass write left inflight (else nothing was
        written); should that fail, Hudi's next writer rolls it back."""
        if self.roll_back is not None:
            undo, self.roll_back = self.roll_back, None
            try:
                undo()
            except Exception as exc:  # the next write's eager rollback of failed writes does it
                event(one_pass.log, "hudi_rollback_failed", level=logging.WARNING, reason=str(exc)[:300],
                      then="the next write rolls the instant back")


class StagesRows:
    """`HudiTarget.stages_rows`: whether a Load's rows are written in `stage` and checked before
    their instant completes (`one_pass`); else (a Spark without what that calls) they are checked
    before the write. A descriptor, not a property: the target port declares a plain attribute."""

    def __get__(self, target: HudiTarget | None, owner: type | None = None) -> bool:
        # a merge's rows are changes made of the checked read (no checks riding on the write)
        return target is not None and target.merge is None and one_pass.usable(target._spark())

    def __set__(self, target: HudiTarget, value: bool) -> None:
        raise AttributeError("stages_rows follows what this process's Spark can do")
