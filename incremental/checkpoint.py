"""`checkpoint show` (a metadata query: no data file is read) and `checkpoint reset` (audited).

A reset is a commit to the target without files: it moves the `txn` checkpoint and records the
old and new positions and the reason in the target's history. Re-reading is safe: objects the
ledger holds in a final status are skipped, so a reset backwards re-loads only what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from lakeinlet.changelog import CommitInfo, DeltaChangelog
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import RESET, Checkpoint, Position
from lakeinlet.incremental.ports import TargetPort
from lakeinlet.incremental.targets.commits import newest_reset


@dataclass(frozen=True)
class CheckpointView:
    checkpoint: Checkpoint
    head: int
    pending: tuple[CommitInfo, ...]
    lag_versions: int
    lag_events: int
    lag_seconds: float

    def lines(self) -> list[str]:
        pos = self.checkpoint.position
        out = [f"checkpoint: {'none (never loaded)' if pos is None else pos} "
               f"(target version {self.checkpoint.target_version})",
               f"changelog head: {self.head}",
               f"lag: {self.lag_versions} versions, {self.lag_events} events, {self.lag_seconds:.0f} s"]
        out += [f"  version {c.version}  {c.timestamp.isoformat(timespec='seconds')}  {c.rows} events"
                for c in self.pending]
        return out


def show(target: TargetPort, changelog: DeltaChangelog, now: datetime | None = None) -> CheckpointView:
    """The checkpoint, the changelog versions after it (time, events) and the lag."""
    cp = target.checkpoint()
    pos = cp.position or Position(-1)
    pending = tuple(changelog.commits(after=pos.complete))
    head = changelog.head_version()
    events = sum(c.rows for c in pending) - pos.offset
    now = now or datetime.now(UTC)
    lag_s = (now - pending[0].timestamp).total_seconds() if pending else 0.0
    return CheckpointView(cp, head, pending, max(head - pos.complete, 0), max(events, 0), lag_s)


@dataclass(frozen=True)
class ResetPlan:
    current: Position | None
    to: Position
    reread: tuple[CommitInfo, ...]
    skipped: tuple[CommitInfo, ...]
    already_applied: int | None

    def lines(self) -> list[str]:
        out = [f"reset checkpoint {self.current if self.current else 'none'} → {self.to}"]
        if self.already_applied is not None:
            return [*out, f"already applied in target version {self.already_applied}: nothing to do"]
        for c in self.reread:
            out.append(f"  re-read version {c.version} ({c.rows} events; objects already loaded are skipped)")
        for c in self.skipped:
            out.append(f"  SKIP version {c.version} ({c.rows} events will not be loaded)")
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


def plan_reset(target: TargetPort, changelog: DeltaChangelog, to: Position, reason: str) -> ResetPlan:
    current = target.checkpoint().position
    cur = current or Position(-1)
    commits = changelog.commits()
    reread = tuple(c for c in commits if to.complete < c.version <= cur.complete)
    skipped = tuple(c for c in commits if cur.complete < c.version <= to.complete)
    return ResetPlan(current, to, reread, skipped, _applied(target, to, reason))


def _applied(target: TargetPort, to: Position, reason: str) -> int | None:
    """The target version of the newest reset, if it was this same request (same target, reason)."""
    reset = newest_reset(target.commits(), target.app_id)
    if reset is not None and reset.position == to and reset.meta.get("reason") == reason:
        return reset.version
    return None


def apply_reset(target: TargetPort, plan: ResetPlan, reason: str) -> int | None:
    """Commit the reset (None when it was already applied)."""
    if plan.already_applied is not None:
        return None
    with target.writing():
        return target.commit_position(plan.current, plan.to, reason, RESET)
