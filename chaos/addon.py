"""mitmproxy addon run by `mitmdump -s`: classify each request, apply the planned fault, log it, and
optionally delay every request (a network's round trip). It runs in the proxy's own virtualenv,
without lakeinlet: its stdlib-only siblings are loaded by path."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from mitmproxy import ctx, http


def _sibling(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_lakeinlet_faults_{name}",
                                                  Path(__file__).with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


operations, plan, error_bodies = (_sibling(n) for n in ("operations", "plan", "error_bodies"))
CONTROL = "/__faults__"


class _Fault(NamedTuple):
    """What `request` decided for a flow, kept in `flow.metadata` for the later hooks."""

    seq: int
    op: Any  # operations.Operation
    decision: Any  # plan.Decision

    @property
    def kind(self) -> str:
        return str(self.decision.rule.fault)


class _Truncate:
    """A response stream filter that lets `keep` bytes through and drops the rest."""

    def __init__(self, keep: int) -> None:
        self.left = keep

    def __call__(self, data: bytes) -> bytes:
        out = data[: self.left]
        self.left -= len(out)
        return out


class InFlight:
    """Requests between their arrival and their answer (or error): the most at once, and the
    integral of their count over time, whose growth over a window divided by the window's length
    is the mean number of concurrent requests in it (Little's law). Per operation: its first
    arrival and its last answer, each with the integral then, so a client reading the counters
    gets the mean over the span of its own calls (e.g. first receive to last delete)."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._open: dict[str, str] = {}
        self.max = 0
        self._area = 0.0
        self._since = clock()
        self.spans: dict[str, dict[str, float]] = {}

    def _advance(self) -> float:
        now = self._clock()
        self._area += len(self._open) * (now - self._since)
        self._since = now
        return now

    def start(self, flow_id: str, operation: str) -> None:
        now = self._advance()
        self._open[flow_id] = operation
        self.max = max(self.max, len(self._open))
        self.spans.setdefault(operation, {"first": now, "first_area": self._area})

    def end(self, flow_id: str) -> None:
        if flow_id in self._open:  # a flow may end through more than one hook
            now = self._advance()
            span = self.spans[self._open.pop(flow_id)]
            span["last"], span["last_area"] = now, self._area

    def stats(self) -> dict[str, Any]:
        self._advance()
        return {"in_flight": len(self._open), "in_flight_max": self.max,
                "in_flight_seconds": round(self._area, 6), "spans": self.spans}


class FaultInjector:
    """Decides in `request` (in arrival order), acts in the hook where the fault belongs.

    `delay_ms` (config, or PUT /__faults__/delay) holds every request that long before it is
    forwarded or answered, faults or none: an added network round trip. The hook awaits it, so
    other requests go on meanwhile, as they would over a slower network.
    """

    def __init__(self) -> None:
        self.decider: Any = None
        self.generation = 0
        self.seq = 0
        self.log: Any = None
        self.delay_ms = 0
        self.in_flight = InFlight()

    def load(self, loader: Any) -> None:
        loader.add_option("faults_config", str, "", "JSON file: fault plan, seed and log path")

    def configure(self, updated: set[str]) -> None:
        """Read the JSON file the `faults_config` option names:
        {"plan": FaultPlan.to_dict(), "seed": int, "log_path": str}."""
        if "faults_config" in updated and ctx.options.faults_config:
            config = json.loads(Path(ctx.options.faults_config).read_text())
            self.decider = plan.Decider(plan.FaultPlan.from_dict(config["plan"]), config["seed"])
            self.delay_ms = int(config.get("delay_ms", 0))
            self.log = open(config["log_path"], "a", buffering=1)  # noqa: SIM115 (one line per write)

    async def request(self, flow: http.HTTPFlow) -> None:
        """Decide a request's fault; answer or drop it here when the fault is not forwarded; then
        hold it `delay_ms`. Requests to /__faults__ are answered here, never delayed, and never
        reach the emulator (see `_control`)."""
        if flow.request.path.startswith(CONTROL):
            self._control(flow)
            return
        self._decide(flow)
        if self.delay_ms > 0:
            await asyncio.sleep(self.delay_ms / 1000)

    def _decide(self, flow: http.HTTPFlow) -> None:
        self.seq += 1
        req = flow.request
        op = operations.classify(req.method, req.path, req.headers, req.raw_content or b"")
        self.in_flight.start(flow.id, op.name)
        decision = self.decider.decide(op.name, op.names, op.resource)
        if decision is None:
            return
        flow.metadata["fault"] = _Fault(self.seq, op, decision)
        kind = decision.rule.fault
        if kind in plan.ANSWER_KINDS:
            status, headers, body = error_bodies.error_response(
                kind, op.service, req.method, "x-amz-target" in req.headers)
            flow.response = http.Response.make(status, body, headers)
            self._record(flow, None)
        elif kind == plan.RESET_BEFORE:
            flow.kill()
            self._record(flow, None)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        fault = flow.metadata.get("fault")
        if fault and fault.kind == "truncate" and flow.response:
            length = int(flow.response.headers.get("content-length", "0") or 0)
            flow.response.stream = _Truncate(min(fault.decision.rule.keep_bytes, length // 2))

    async def response(self, flow: http.HTTPFlow) -> None:
        fault = flow.metadata.get("fault")
        if not fault or fault.kind not in plan.AFTER_KINDS or not flow.response:
            self.in_flight.end(flow.id)
            return
        upstream_status = flow.response.status_code
        if fault.kind == "latency":
            await asyncio.sleep(fault.decision.rule.latency_ms / 1000)
        elif fault.kind == "error_after":
            status, headers, body = error_bodies.error_response(
                fault.kind, fault.op.service, flow.request.method, "x-amz-target" in flow.request.headers)
            flow.response = http.Response.make(status, body, headers)
        else:  # reset_after, truncate: the emulator applied the request; the client loses the answer
            flow.kill()
        self._record(flow, upstream_status)
        self.in_flight.end(flow.id)

    def error(self, flow: http.HTTPFlow) -> None:
        self.in_flight.end(flow.id)
        fault = flow.metadata.get("fault")
        if fault and fault.kind in plan.AFTER_KINDS and not flow.metadata.get("logged"):
            self._record(flow, None)  # forwarded, but the emulator did not answer

    def _record(self, flow: http.HTTPFlow, upstream_status: int | None) -> None:
        seq, op, decision = fault = flow.metadata["fault"]
        flow.metadata["logged"] = True
        forwarded = fault.kind in plan.AFTER_KINDS
        self.log.write(json.dumps({
            "time": time.time(), "seq": seq, "generation": self.generation,
            "operation": op.name, "api": op.api, "service": op.service, "bucket": op.bucket,
            "key": op.key, "queue": op.queue, "fault": fault.kind, "rule": decision.index,
            "occurrence": decision.occurrence, "forwarded": forwarded, "upstream_status": upstream_status,
            "applied": forwarded and upstream_status is not None and upstream_status < 400}) + "\n")

    def _control(self, flow: http.HTTPFlow) -> None:
        """GET /__faults__: counters; POST .../enable, .../disable; PUT .../plan {plan, seed}
        (restarts the counters, in-flight ones too); PUT .../delay {delay_ms}."""
        action = flow.request.path[len(CONTROL):].strip("/")
        if action in ("enable", "disable"):
            self.decider.enabled = action == "enable"
        elif action == "plan" and flow.request.method == "PUT":
            config = json.loads(flow.request.raw_content or b"{}")
            self.decider = plan.Decider(plan.FaultPlan.from_dict(config["plan"]), config["seed"])
            self.generation += 1
            self.in_flight = InFlight()
        elif action == "delay" and flow.request.method == "PUT":
            self.delay_ms = int(json.loads(flow.request.raw_content or b"{}")["delay_ms"])
        elif action:
            flow.response = http.Response.make(404, f"unknown control {action!r}".encode())
            return
        stats = self.decider.stats() | {"generation": self.generation, "seq": self.seq,
                                        "delay_ms": self.delay_ms} | self.in_flight.stats()
        flow.response = http.Response.make(200, json.dumps(stats).encode(),
                                           {"Content-Type": "application/json"})


addons = [FaultInjector()]
