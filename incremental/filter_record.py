"""The key filters a checkpoint was made under, kept in the target's commits beside it (versioned,
as the checkpoint is): a run whose filters select keys the recorded ones did not says so, since the
changelog versions already planned hold objects only the new filters select, and none is re-planned."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lakeinlet.incremental.model import Checkpoint

FORMAT = 1
FILTERS, GAP = "filters", "filters_gap"
"""Commit metadata keys: the filters of the run that made the commit, and the versions planned
under narrower filters that no reset has re-read since."""


@dataclass(frozen=True)
class FilterRecord:
    """What a run selects: its buckets (empty: any), prefixes, suffixes, regex, ignored prefixes,
    globs, and whether writers' artefacts load (records before those three hold their defaults)."""

    buckets: tuple[str, ...] = ()
    prefix: tuple[str, ...] = ()
    suffix: tuple[str, ...] = ()
    regex: str | None = None
    ignore_prefix: tuple[str, ...] = ()
    include_glob: tuple[str, ...] = ()
    exclude_glob: tuple[str, ...] = ()
    include_hidden: bool = False

    @classmethod
    def of(cls, plan: Any) -> FilterRecord:
        """The record of a `PlanSection`."""
        return cls(tuple(plan.buckets), tuple(plan.prefix), tuple(plan.suffix), plan.regex,
                   tuple(plan.ignore_prefix), tuple(plan.include_glob), tuple(plan.exclude_glob),
                   plan.include_hidden)

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "buckets": self.buckets, "prefix": self.prefix,
                           "suffix": self.suffix, "regex": self.regex, "ignore_prefix": self.ignore_prefix,
                           "include_glob": self.include_glob, "exclude_glob": self.exclude_glob,
                           "include_hidden": self.include_hidden})

    @classmethod
    def from_json(cls, text: str) -> FilterRecord | None:
        """None for a format this version does not know (a newer lakeinlet wrote it)."""
        d = json.loads(text)
        if d.get("format") != FORMAT:
            return None
        return cls(tuple(d["buckets"]), tuple(d["prefix"]), tuple(d["suffix"]), d["regex"],
                   tuple(d["ignore_prefix"]), tuple(d.get("include_glob", ())),
                   tuple(d.get("exclude_glob", ())), bool(d.get("include_hidden", False)))

    def widened(self, now: FilterRecord) -> list[str]:
        """What `now` selects that this record did not, one phrase per setting (empty: nothing)."""
        out = [_phrase(f"--{name.replace('_', '-')}", old, new) for name, old, new, wider in (
            ("bucket", self.buckets, now.buckets, _more(self.buckets, now.buckets, str.__eq__)),
            ("prefix", self.prefix, now.prefix, _more(self.prefix, now.prefix, str.startswith)),
            ("suffix", self.suffix, now.suffix, _more(self.suffix, now.suffix, str.endswith)),
            ("regex", _t(self.regex), _t(now.regex), self.regex is not None and now.regex != self.regex),
            ("ignore_prefix", self.ignore_prefix, now.ignore_prefix,
             any(p not in now.ignore_prefix for p in self.ignore_prefix)),
            ("include_glob", self.include_glob, now.include_glob,
             _more(self.include_glob, now.include_glob, str.__eq__)),
            ("exclude_glob", self.exclude_glob, now.exclude_glob,
             any(g not in now.exclude_glob for g in self.exclude_glob)),
            ("include_hidden", _b(self.include_hidden), _b(now.include_hidden),
             now.include_hidden and not self.include_hidden)) if wider]
        return out


def _more(old: tuple[str, ...], new: tuple[str, ...], within: Any) -> bool:
    """An include list `new` selects more than `old` (empty: everything)."""
    return bool(old) and (not new or any(not any(within(n, o) for o in old) for n in new))


def _b(flag: bool) -> tuple[str, ...]:
    return ("on",) if flag else ("off",)


def _t(regex: str | None) -> tuple[str, ...]:
    return () if regex is None else (regex,)


def _phrase(flag: str, old: tuple[str, ...], new: tuple[str, ...]) -> str:
    return f"{flag} {', '.join(old) or '(any)'} → {', '.join(new) or '(any)'}"


@dataclass(frozen=True)
class Gap:
    """Changelog versions through `through` were planned under filters narrower than today's."""

    through: int
    changes: str

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "through": self.through, "changes": self.changes})

    @classmethod
    def from_json(cls, text: str | None) -> Gap | None:
        d = json.loads(text) if text else {}
        return cls(int(d["through"]), str(d["changes"])) if d.get("format") == FORMAT else None

    def line(self, route: str | None) -> str:
        """What to do, in one line."""
        who = f"route {route}" if route else "this table"
        flag = f"--route {route} " if route else ""
        return (f"{who}: filters changed ({self.changes}) after changelog versions 0-{self.through} were "
                "planned: their objects only the new filters select are not loaded; to load them run "
                f"`lakeinlet-load checkpoint reset {flag}--to-version 0` (the ledger skips what is loaded)")


def gap_of(ck: Checkpoint, now: FilterRecord) -> Gap | None:
    """The versions `ck` was planned through under narrower filters than `now`, None when none:
    a recorded gap stands until a reset moves the checkpoint back before its end."""
    if ck.position is None or ck.position.complete < 0:
        return None
    old = Gap.from_json(ck.filters_gap)
    recorded = FilterRecord.from_json(ck.filters) if ck.filters else None
    wider = recorded.widened(now) if recorded is not None else []
    if wider:
        changes = "; ".join([*([old.changes] if old else []), *wider])
        return Gap(ck.position.complete, changes)
    return old if old is not None and ck.position.complete >= old.through else None


def stamp(ck: Checkpoint, now: FilterRecord) -> tuple[dict[str, str], Gap | None]:
    """The metadata every commit of this run carries, and the gap it records."""
    gap = gap_of(ck, now)
    return {FILTERS: now.to_json(), **({GAP: gap.to_json()} if gap else {})}, gap
