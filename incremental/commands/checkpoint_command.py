"""`checkpoint show` and `checkpoint reset` as the command line prints them."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lakeinlet.incremental.commands import checkpoint as ck
from lakeinlet.incremental.wiring import Parts
from lakeinlet.logs import say


def freshness_fields(view: ck.CheckpointView) -> dict[str, Any]:
    """The watermark of `checkpoint show --json` (None where no commit records it yet)."""
    mark = view.watermark
    return {"newest_event_time": mark.event_time.isoformat() if mark and mark.event_time else None,
            "changelog_version": mark.changelog_version if mark else None,
            "freshness_seconds": view.freshness_seconds}


def cmd_checkpoint(parts: Parts, args: argparse.Namespace) -> int:
    if args.action == "show":
        view = ck.show(parts.target, parts.changelog)
        route = getattr(args, "route_name", "")
        say(json.dumps(_json(view, route)) if args.json else "\n".join(view.lines()))
        return 0
    to = ck.resolve(parts.changelog, args.to_version, args.to_time, args.to_latest)
    plan = ck.plan_reset(parts.target, parts.changelog, to, args.reason)
    say("\n".join(plan.lines()))
    if args.dry_run:
        say("dry run: nothing changed")
        return 0
    version = ck.apply_reset(parts.target, plan, args.reason, parts.hold)
    if version is not None:
        say(f"reset recorded in target version {version}")
    return 0


def _json(view: ck.CheckpointView, route_name: str) -> dict[str, Any]:
    pos = view.checkpoint.position
    numbers = pos.fields() if pos else {"complete": None, "offset": None}
    route = {"route": route_name} if route_name else {}
    return {**route, "checkpoint": str(pos) if pos else None, **numbers, "head": view.head,
            "lag_versions": view.lag_versions, "lag_events": view.lag_events,
            "lag_bytes": view.lag_bytes, "lag_seconds": view.lag_seconds,
            **freshness_fields(view),
            "pending": [{"version": c.version, "committed_at": c.timestamp.isoformat(),
                         "events": c.rows} for c in view.pending]}
