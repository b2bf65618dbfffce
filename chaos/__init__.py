"""Fault injection between the jobs and the emulator, never shipped: a seeded, scripted, logging HTTP
proxy (`FaultProxy` says why a proxy, and why mitmproxy) and the campaign that drives it (`make
chaos`, `python -m chaos.campaign`); `python -m chaos --help` runs a proxy by hand."""

from __future__ import annotations

from chaos.fault_log import FaultRecord, count_faults, read_fault_log
from chaos.operations import Operation, classify
from chaos.plan import FAULT_KINDS, FaultPlan, FaultRule
from chaos.proxy import MITMPROXY_VERSION, FaultProxy, ensure_mitmproxy

__all__ = ["FAULT_KINDS", "MITMPROXY_VERSION", "FaultPlan", "FaultProxy", "FaultRecord", "FaultRule",
           "Operation", "classify", "count_faults", "ensure_mitmproxy", "read_fault_log"]
