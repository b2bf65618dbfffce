"""Shared fixtures: a moto server (its own process, loopback, free port) and unique stacks."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.emulator import TEST_CREDENTIALS, MotoServer, Stack, provision

for _name, _value in TEST_CREDENTIALS.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # Spark binds to loopback only


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """One moto server for the session; tests isolate themselves by unique names."""
    with MotoServer() as server:
        yield server


@pytest.fixture
def aws(moto_server: MotoServer) -> AwsSection:
    return AwsSection(endpoint_url=moto_server.endpoint)


def unique(prefix: str) -> str:
    """A bucket/queue name unique to this test (S3-valid: lowercase, digits, dashes)."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def stack(moto_server: MotoServer) -> Stack:
    """A fresh bucket + queue + DLQ + S3 → SQS notification for this test.

    A short visibility timeout (see `Stack.settings`) is not set here: tests that need one
    provision their own with `provision(..., settings=QueueSettings(...))`.
    """
    return provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"))
