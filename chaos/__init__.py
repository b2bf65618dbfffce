"""Fault injection between the jobs and the emulator: a seeded, scripted, logging HTTP proxy.

Why a proxy, and why mitmproxy: moto and community LocalStack have no S3/SQS fault API and
kernel-level faults (tc netem) are unavailable here, so faults must be injected on the wire.
A reverse proxy reached through the endpoint URL serves every client alike: boto3 (job 1),
delta-rs (changelog and Delta commits) and Spark's s3a (job 2). mitmproxy (PyPI, maintained) can
answer, drop, delay or cut each request from a small addon script and, unlike a TCP-level tool
such as Toxiproxy (no package here; built with `go install`), sees HTTP: it can tell a
DeleteMessageBatch from a ReceiveMessage and a Delta commit PUT from a data-file PUT, and can
forward a request so the emulator APPLIES it and then fail the answer (the uncertain outcomes).
botocore's before-send event and hadoop-aws's fault-injecting client each reach one client only,
and never an applied-but-failed request. mitmproxy pins many packages, so it gets its own
virtualenv (`ensure_mitmproxy`); the addon therefore imports no lakeinlet code, only this
package's stdlib-only modules by path.

Pieces: `operations` (name the operation of a request), `plan` (rules and the seeded decision),
`error_bodies` (real AWS error shapes), `addon` (runs inside mitmdump), `proxy` (`FaultProxy`),
`fault_log` (read the log). `python -m chaos --help` runs a proxy by hand.
"""

from __future__ import annotations

from chaos.fault_log import FaultRecord, count_faults, read_fault_log
from chaos.operations import Operation, classify
from chaos.plan import FAULT_KINDS, FaultPlan, FaultRule
from chaos.proxy import MITMPROXY_VERSION, FaultProxy, ensure_mitmproxy

__all__ = ["FAULT_KINDS", "MITMPROXY_VERSION", "FaultPlan", "FaultProxy", "FaultRecord", "FaultRule",
           "Operation", "classify", "count_faults", "ensure_mitmproxy", "read_fault_log"]
