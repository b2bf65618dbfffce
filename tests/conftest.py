"""Shared fixtures: a moto server (its own process, loopback, free port) and unique stacks."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer, Stack, provision
from lakeinlet.events import ObjectEvent, ReceivedEvent
from tests.installed import Dists, build, installed_venv

pytest_plugins = ["tests.schedule"]

for _name, _value in TEST_CREDENTIALS.items():
    os.environ[_name] = _value
os.environ.pop("AWS_ENDPOINT_URL", None)
os.environ.pop("AWS_PROFILE", None)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # Spark binds to loopback only
SCRATCH_OWNER = "LAKEINLET_TESTS_SCRATCH_OWNER"


def pytest_configure(config: pytest.Config) -> None:
    """Every Spark this run starts keeps its scratch (a local session's copies of the jars, hundreds of
    MB each; shuffle and block files) under one folder the run removes at its end: a driver or worker a
    test SIGKILLs never removes its own, and a suite leaking them filled the CI machine's disk."""
    if "SPARK_LOCAL_DIRS" not in os.environ:  # xdist's workers inherit the controller's folder
        os.environ["SPARK_LOCAL_DIRS"] = tempfile.mkdtemp(prefix="lakeinlet-tests-spark-")
        os.environ[SCRATCH_OWNER] = str(os.getpid())


def pytest_unconfigure(config: pytest.Config) -> None:
    if os.environ.get(SCRATCH_OWNER) == str(os.getpid()):
        shutil.rmtree(os.environ.pop("SPARK_LOCAL_DIRS"), ignore_errors=True)
        del os.environ[SCRATCH_OWNER]


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """One moto server for the session; tests isolate themselves by unique names."""
    with MotoServer() as server:
        yield server


@pytest.fixture
def aws(moto_server: MotoServer) -> AwsSection:
    return AwsSection(endpoint_url=moto_server.endpoint)


@pytest.fixture
def in_process_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsSection]:
    """moto's in-process AWS with fake credentials; every call in the test stays in this process."""
    from moto import mock_aws

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        yield AwsSection(endpoint_url=None)


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


def received_rows(batch: str, n: int) -> list[ReceivedEvent]:
    """`n` changelog rows of one poll batch, distinct keys (for changelog adapter tests)."""
    now = datetime.now(UTC)
    return [ReceivedEvent(ObjectEvent("bkt", f"{batch}/k{i}", "ObjectCreated:Put", now, 1, f"e{i}"),
                          f"{batch}-m{i}", now, batch) for i in range(n)]


@pytest.fixture(params=["local", "s3"])
def changelog_location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, AwsSection]:
    """A changelog URI, once on a local path and once on S3 (moto), with its AWS settings."""
    if request.param == "local":
        return str(tmp_path / "changelog"), AwsSection()
    aws: AwsSection = request.getfixturevalue("aws")
    bucket = unique("lake")
    client("s3", aws).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/changelog", aws


@pytest.fixture(scope="session")
def built_dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """lakeinlet's sdist and wheel, built once per session from this checkout (outside it)."""
    return build(tmp_path_factory.mktemp("dists"))


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory, built_dists: Dists) -> Path:
    """A fresh venv outside the checkout with the built wheel and its dependencies from PyPI
    (what `pip install lakeinlet` gives); run its commands with `tests.installed.run`."""
    return installed_venv(tmp_path_factory.mktemp("wheel-venv"), built_dists)


TEST_ALL = "LAKEINLET_TEST_ALL"
"""Set by `make test-all`: the scenarios marked `test_all(line)` run on that line too."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every spark and cluster test is also an `engine` test. On a Spark line with no Hudi jars
    (Spark 4), tests that run Hudi in Spark skip, saying why; Hudi's engine-free code (the lease,
    hudi-rs reads) is still tested there. A test marked `test_all(line)` skips on that line unless
    `make test-all` runs it."""
    from lakeinlet import jars

    for item in items:
        if item.get_closest_marker("spark") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.engine)
    try:
        line = jars.installed_line()
    except jars.UnsupportedSpark:
        return
    if not os.environ.get(TEST_ALL):
        extra = pytest.mark.skip(reason=f"Spark {line}: `make test-all` runs this scenario on this line "
                                        "(`make test` on the 3.5 line)")
        for item in items:
            if any(line in m.args for m in item.iter_markers("test_all")):
                item.add_marker(extra)
    why = jars.NOT_ON_LINE.get((line, "hudi"))
    if why is None:
        return
    skip = pytest.mark.skip(reason=f"Spark {line}: {why}")
    for item in items:
        in_spark = item.get_closest_marker("engine")
        if item.get_closest_marker("hudi") or (in_spark and "hudi" in item.nodeid.lower()):
            item.add_marker(skip)
