"""The transform a checkpoint was made under, kept in the target's commits beside its filters: a run
with another transform on a table says so once (rows loaded before keep the earlier shape)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from lakeinlet.incremental.model import Checkpoint
from lakeinlet.incremental.transform_settings import Transform
from lakeinlet.logs import event

log = logging.getLogger(__name__)
TRANSFORM, NONE = "transform", "(none)"
"""Commit metadata key: the run's transform (its SQL on one line, or its hook; NONE for none: some
formats' commit properties take no empty value)."""


def text(step: Transform | None) -> str:
    return NONE if step is None else step.hook or " ".join((step.sql or "").split())


def changed(ck: Checkpoint, step: Transform | None, route: str | None = None) -> str | None:
    """One line when `step` is not the transform the checkpoint's commit recorded (None: the same,
    or none recorded: a table loaded before lakeinlet recorded it, or never loaded)."""
    if ck.position is None or ck.transform is None or ck.transform == text(step):
        return None
    who = f"route {route}" if route else "this table"
    was, now = ck.transform, text(step)
    return (f"{who}: the transform changed since the checkpoint's commit (was {was[:120]!r}, now "
            f"{now[:120]!r}): rows loaded before keep the shape the earlier one gave them")


def stamped(meta: Mapping[str, str], ck: Checkpoint, step: Transform | None,
            route: str | None = None) -> dict[str, str]:
    """`meta` with the run's transform, which every commit of the run records; a change is logged
    (a warning, not a refusal: reshaping a table on purpose is allowed)."""
    if why := changed(ck, step, route):
        event(log, "transform changed", level=logging.WARNING, line=why)
    return {**meta, TRANSFORM: text(step)}
