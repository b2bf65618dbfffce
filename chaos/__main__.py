"""Run the fault proxy by hand: `python -m chaos ensure|serve|overhead` (exit codes: 0 ok, 2 bad
arguments). `serve --plan plan.json` takes `FaultPlan.to_dict()`: {"rules": [{"operation":
"PutObject", "fault": "reset_after", "probability": 0.1}], "max_faults": null, "enabled": true}."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from chaos.overhead import main as overhead_main
from chaos.plan import FaultPlan
from chaos.proxy import FaultProxy, ensure_mitmproxy


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m chaos", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("ensure", help="create the proxy's virtualenv; print mitmdump's path")
    serve = sub.add_parser("serve", help="run a fault proxy in the foreground")
    serve.add_argument("--upstream", required=True, help="the emulator's URL")
    serve.add_argument("--plan", type=Path, help="plan JSON file (default: no faults)")
    serve.add_argument("--seed", type=int, default=0, help="seed of probabilistic faults")
    serve.add_argument("--log", type=Path, default=Path("faults.jsonl"), help="fault log (JSON lines)")
    serve.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    sub.add_parser("overhead", help="measure ms per request, direct vs proxied")
    return parser


def main(argv: list[str] | None = None) -> int:
    """`ensure`: make .venv-faults with the pinned mitmproxy; `serve`: print the proxy's endpoint,
    then serve until Ctrl-C or SIGTERM; `overhead`: ms per request, direct and through the proxy."""
    args = _parser().parse_args(argv)
    if args.command == "ensure":
        print(ensure_mitmproxy())
        return 0
    if args.command == "overhead":
        return overhead_main()
    try:
        plan = FaultPlan.from_dict(json.loads(args.plan.read_text())) if args.plan else FaultPlan()
    except (OSError, ValueError, TypeError) as err:
        print(f"--plan {args.plan}: {err}", file=sys.stderr)
        return 2
    with FaultProxy(args.upstream, plan, args.seed, args.log, port=args.port) as proxy:
        print(f"AWS_ENDPOINT_URL={proxy.endpoint}  (control: {proxy.endpoint}/__faults__)", flush=True)
        _wait_for_stop()
    return 0


def _wait_for_stop() -> None:
    """Return on SIGINT or SIGTERM (handlers, not a blocked mask: mitmdump would inherit it)."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass


if __name__ == "__main__":
    sys.exit(main())
