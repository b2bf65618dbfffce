"""Driving target ports from tests: a commit as the loader makes one (stage, then publish), and
crashes injected at a batch's named steps by wrapping the loader's ports."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from lakeinlet.incremental.loader import Loader
from lakeinlet.incremental.model import Outcome, PlannedObject, Position
from lakeinlet.incremental.ports import Load, ReadBatch, TargetPort

CRASH_POINTS = ("planned", "read", "written", "committed", "ledger_written")
"""planned: before any HEAD or staging; read: after the read, before staging; written: staged, not
published; committed: published, no ledger row; ledger_written: after the batch's ledger append."""


class Crash(RuntimeError):
    """Raised at a named step when a test injects a crash there."""


def commit(target: TargetPort, batch: ReadBatch, start: Position, end: Position, batch_id: str,
           outcomes: Sequence[Outcome], replace: Sequence[PlannedObject] = ()) -> tuple[int, list[Outcome]]:
    """A load committed as the loader commits one: the version and the outcomes it recorded."""
    staged = target.stage(Load(batch, outcomes, replace), start, end, batch_id)
    return target.publish(staged), staged.outcomes


class _Around:
    """`inner` with some methods replaced; every other attribute is the inner one's."""

    def __init__(self, inner: Any, **methods: Any) -> None:
        self._inner = inner
        self.__dict__.update(methods)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def crashing(loader: Loader, step: str) -> Loader:
    """The loader with its store, target and ledger wrapped so that its next batch raises `Crash`
    at `step` (one of CRASH_POINTS)."""
    if step not in CRASH_POINTS:
        raise ValueError(f"unknown crash point {step!r}: expected one of {CRASH_POINTS}")
    store, target, ledger = loader.store, loader.target, loader.ledger
    published: list[int] = []

    def at(*steps: str) -> None:
        if step in steps:
            raise Crash(f"injected crash at {step}")

    def head_many(objs: Any) -> Any:
        at("planned")
        return store.head_many(objs)

    def stage(*args: Any, **kw: Any) -> Any:
        at("planned", "read")
        return target.stage(*args, **kw)

    def publish(staged: Any) -> int:
        at("written")
        published.append(target.publish(staged))
        at("committed")
        return published[-1]

    def append(outcomes: Any, target_version: int, batch_id: str) -> None:
        ledger.append(outcomes, target_version, batch_id)
        if published and target_version == published[-1]:
            at("ledger_written")

    return dataclasses.replace(loader, store=_Around(store, head_many=head_many),
                               target=_Around(target, stage=stage, publish=publish),
                               ledger=_Around(ledger, append=append))
