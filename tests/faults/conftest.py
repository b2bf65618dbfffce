"""Fixtures for the fault proxy: one mitmdump per module in front of the session's moto server.

Each test sets its own plan (`proxy.set_plan`), which restarts the counters and the generation
its fault records carry, and uses unique bucket and queue names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from chaos import FaultPlan, FaultProxy, ensure_mitmproxy
from lakeinlet.dev.emulator import MotoServer


@pytest.fixture(scope="session")
def mitmdump() -> Path:
    """The pinned mitmproxy in its own virtualenv (created on first use: needs PyPI)."""
    return ensure_mitmproxy()


@pytest.fixture(scope="module")
def module_proxy(moto_server: MotoServer, mitmdump: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultProxy]:
    log = tmp_path_factory.mktemp("faults") / "faults.jsonl"
    with FaultProxy(moto_server.endpoint, FaultPlan(), 0, log, mitmdump=mitmdump) as proxy:
        yield proxy


@pytest.fixture
def proxy(module_proxy: FaultProxy) -> FaultProxy:
    """The module's proxy with no faults planned and fresh counters."""
    module_proxy.set_plan(FaultPlan(), seed=0)
    return module_proxy


def aws_client(service: str, endpoint: str, attempts: int = 1) -> Any:
    """A boto3 client in standard retry mode with `attempts` attempts in all (1: no retry)."""
    cfg = Config(retries={"total_max_attempts": attempts, "mode": "standard"},
                 s3={"addressing_style": "path"}, connect_timeout=5, read_timeout=10)
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", config=cfg)
