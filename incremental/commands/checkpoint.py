"""`checkpoint show` (a metadata query: no data file is read) and `checkpoint reset` (audited in
the target's history)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime

from lakeinlet.changelog.reader import CommitInfo, DeltaChangelog
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import RESET, Checkpoint, Position, Watermark
from lakeinlet.incremental.ports import Target
from lakeinlet.incremental.targets.commits import newest_reset


@dataclass(frozen=True)
class CheckpointView:
    checkpoint: Checkpoint
    head: int
    pending: tuple[CommitInfo, ...]
    lag_versions: int
    lag_events: int
    lag_seconds: float
    freshness_seconds: float | None = None
    """Now − the newest event time the target's commits record (None: none records one)."""

    @property
    def lag_bytes(self) -> int | None:
        """Bytes of the objects announced by the pending versions (whole versions: a version the
        checkpoint is inside of counts in full); None when a pending commit does not record them."""
        sizes = [c.bytes for c in self.pending]
        return None if None in sizes else sum(s or 0 for s in sizes)

    def lag_line(self) -> str:
        size = self.lag_bytes
        held = "" if not self.lag_events else (" (bytes unknown)" if size is None else f" ({mib(size)})")
        return f"lag: {self.lag_versions} versions, {self.lag_events} events{held}, {self.lag_seconds:.0f} s"

    @property
    def watermark(self) -> Watermark | None:
        return self.checkpoint.watermark

    def lines(self) -> list[str]:
        pos = self.checkpoint.position
        out = [f"checkpoint: {'none (never loaded)' if pos is None else pos} "
               f"(target version {self.checkpoint.target_version})",
               f"changelog head: {self.head}",
               self.lag_line(),
               self.freshness_line()]
        out += [f"  version {c.version}  {c.timestamp.isoformat(timespec='seconds')}  {c.rows} events"
                for c in self.pending]
        return out

    def freshness_line(self) -> str:
        """How old the newest event loaded into the table is (caught up or not: with nothing
        pending, the age still says how long ago the newest event that reached the table happened)."""
        w = self.watermark
        if w is None:
            return "freshness: unknown (no commit of this loader records it yet: its next batch will)"
        version = (f"changelog version {w.changelog_version}" if w.changelog_version >= 0
                   else "no changelog version yet")
        if w.event_time is None or self.freshness_seconds is None:
            return f"freshness: unknown (no event loaded yet, {version})"
        caught_up = "; caught up, nothing pending" if self.lag_versions == 0 else ""
        return (f"freshness: {age(self.freshness_seconds)} (newest event loaded "
                f"{w.event_time.isoformat(timespec='seconds')}, {version}){caught_up}")


def mib(size: int) -> str:
    """A byte count as people read it: `20 B`, `3.5 KiB`, `12.0 MiB`."""
    if size < 1024:
        return f"{size} B"
    return f"{size / 1024 / 1024:.1f} MiB" if size >= 1024 * 1024 else f"{size / 1024:.1f} KiB"


def age(seconds: float) -> str:
    """A duration as people read it: `42 s`, `3 min 5 s`, `2 h 10 min`, `4 d 3 h`."""
    s = max(int(seconds), 0)
    for unit, size, sub, sub_size in (("d", 86400, "h", 3600), ("h", 3600, "min", 60), ("min", 60, "s", 1)):
        if s >= size:
            return f"{s // size} {unit} {s % size // sub_size} {sub}"
    return f"{s} s"


def show(target: Target, changelog: DeltaChangelog, now: datetime | None = None) -> CheckpointView:
    """The checkpoint, the changelog versions after it (time, events), the lag and the freshness."""
    cp = target.checkpoint()
    pos = cp.position or Position(-1)
    head = changelog.head_version()
    pending = tuple(between(changelog, pos.complete, head)[0])
    events = sum(c.rows for c in pending) - pos.offset
    now = now or datetime.now(UTC)
    lag_s = (now - pending[0].timestamp).total_seconds() if pending else 0.0
    newest = cp.watermark.event_time if cp.watermark else None
    fresh = (now - newest).total_seconds() if newest else None
    return CheckpointView(cp, head, pending, max(head - pos.complete, 0), max(events, 0), lag_s, fresh)


@dataclass(frozen=True)
class ResetPlan:
    current: Position | None
    to: Position
    reread: tuple[CommitInfo, ...]
    skipped: tuple[CommitInfo, ...]
    already_applied: int | None
    unreadable: tuple[int, ...] = ()
    """Versions the reset re-reads or skips whose commit could not be read (its commit file is
    gone, e.g. log cleanup): they are still moved over, but how many events they hold is unknown."""

    def lines(self) -> list[str]:
        out = [f"reset checkpoint {self.current if self.current else 'none'} → {self.to}"]
        if self.already_applied is not None:
            return [*out, f"already applied in target version {self.already_applied}: nothing to do"]
        cur = (self.current or Position(-1)).complete
        known = {c.version: c for c in (*self.reread, *self.skipped)}
        for v in sorted({*known, *self.unreadable}):
            c = known.get(v)
            events = f"{c.rows} events" if c else "events unknown: its commit is not readable"
            out.append(f"  re-read version {v} ({events}; objects already loaded are skipped)" if v <= cur
                       else f"  SKIP version {v} ({events}{'' if c else ';'} will not be loaded)")
        if self.unreadable:
            out.append(f"  {len(self.unreadable)} of these versions have no readable commit (commit "
                       "file gone, e.g. log cleanup): they are listed, but their events are unknown")
        return out


def resolve(changelog: DeltaChangelog, to_version: int | None, to_time: datetime | None,
            to_latest: bool = False) -> Position:
    """--to-version N: the next run reads from version N on; --to-time T: from the first version
    committed after T; --to-latest: from the first version after the head (skips the rest).

    Raises:
        TerminalError: N is not a changelog version (below 0 or past the head), or T is in the
            future: a reset never points where no event can be.
    """
    head = changelog.head_version()
    if to_latest:
        return Position(head)
    if to_version is not None:
        if not 0 <= to_version <= head:
            raise TerminalError(
                f"--to-version {to_version}: the changelog holds versions 0..{head}; pick one of "
                f"them (the next run reads from it on), or --to-latest to skip everything up to "
                f"version {head} on purpose")
        return Position(to_version - 1)
    assert to_time is not None
    if to_time > datetime.now(UTC):
        raise TerminalError(f"--to-time {to_time.isoformat()} is in the future; use --to-latest to "
                            "skip everything up to the changelog's head on purpose")
    return Position(changelog.version_at(to_time))


def plan_reset(target: Target, changelog: DeltaChangelog, to: Position, reason: str) -> ResetPlan:
    """The changelog versions a reset to `to` re-reads (backwards) or skips (forwards). Re-reading
    is safe: objects the ledger holds in a final status are skipped, so a reset backwards
    re-loads only what is missing."""
    current = target.checkpoint().position
    cur = current or Position(-1)
    low, high = sorted((to.complete, cur.complete))
    # The versions a reset moves over are the integers between the two positions, whatever the
    # log says: the commits only add their time and event counts, so one that cannot be read is
    # named as such instead of dropped from the list.
    commits, unreadable = between(changelog, low, high)
    reread = tuple(c for c in commits if c.version <= cur.complete)
    skipped = tuple(c for c in commits if c.version > cur.complete)
    return ResetPlan(current, to, reread, skipped, _applied(target, to, reason), unreadable)


TRIES = 3
"""Reads of a range of commits while the changelog's head keeps moving (see `between`)."""


def between(changelog: DeltaChangelog, after: int, until: int) -> tuple[list[CommitInfo], tuple[int, ...]]:
    """The commits of versions `after+1 .. until`, oldest first, and the versions among them
    whose commit could not be read.

    Asked with a limit, the changelog reads the commit files by their names (a version is its
    file's name). Without one it asks delta-rs's history, which numbers the commit infos it lists
    downwards from the version of the table it has open, while it lists every commit file there
    is: a poller's commit landing between the two shifts every number by one (version 0's info
    then goes by -1 and is dropped, version N shows N+1's events). The history is still what
    answers when the first commit file of the range is gone, so that read is repeated while the
    head moves under it.
    """
    if until <= after:
        return [], ()
    found: dict[int, CommitInfo] = {}
    for _ in range(TRIES):
        head = changelog.head_version()
        found = {c.version: c for c in changelog.commits(after=after, limit=until - after)
                 if after < c.version <= until}
        if changelog.head_version() == head:
            break
    missing = tuple(v for v in range(after + 1, until + 1) if v not in found)
    return [found[v] for v in sorted(found)], missing


def _applied(target: Target, to: Position, reason: str) -> int | None:
    """The target version of the newest reset, if it was this same request (same target, reason)."""
    reset = newest_reset(target.commits(), target.app_id)
    if reset is not None and reset.position == to and reset.meta.get("reason") == reason:
        return reset.version
    return None


def apply_reset(target: Target, plan: ResetPlan, reason: str,
                hold: Callable[[], AbstractContextManager[None]] = nullcontext) -> int | None:
    """Commit the reset, holding what a writer of the target holds (None when it was already
    applied): a commit to the target without files that moves the checkpoint and records the old
    and new positions and the reason in the target's history."""
    if plan.already_applied is not None:
        return None
    with hold():
        return target.commit_position(plan.current, plan.to, reason, RESET)
