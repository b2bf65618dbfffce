"""One local[2] SparkSession for the whole pytest run: s3a pointed at the moto server, and every
target format's jars and session settings at once (a real run sets only its own format's).

A missing jar fails these tests with `lakeinlet.spark`'s one-line message (`lakeinlet jars …`),
never a silent skip.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.dev.emulator import MotoServer
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.read.reader import SparkReader
from lakeinlet.incremental.targets import every_format
from lakeinlet.spark import REQUIRED_CLASSES, SparkSection, get_session

JARS = os.environ.get("LAKEINLET_JARS") or str(Path(__file__).resolve().parents[2] / ".jars")
ICEBERG_URI_ENV = "LAKEINLET__ICEBERG__ICEBERG_CATALOG_URI"


@pytest.fixture(scope="session")
def iceberg_catalog(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One JDBC/SQLite Iceberg catalog for the run (Spark keeps a catalog once it is used)."""
    uri = f"jdbc:sqlite:{tmp_path_factory.mktemp('iceberg') / 'catalog.db'}"
    os.environ[ICEBERG_URI_ENV] = uri  # commands run through main() read it like any setting
    return uri


@pytest.fixture(scope="session")
def spark(moto_server: MotoServer, iceberg_catalog: str) -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    section = SparkSection(master="local[2]", jars=JARS, shuffle_partitions=2)
    needs = every_format()
    session = get_session(section, moto_server.endpoint, "lakeinlet-tests", ["s3a", *needs.groups],
                          needs.conf, REQUIRED_CLASSES | needs.required)
    yield session
    session.stop()


@pytest.fixture(params=["delta", "hudi", "iceberg"])
def target_format(request: pytest.FixtureRequest) -> str:
    """Each acceptance test runs once per target format."""
    return str(request.param)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[ReadBatch]:
    """Every ReadBatch the loader's reader returns."""
    seen: list[ReadBatch] = []
    original = SparkReader.read

    def spy(self: SparkReader, *args: Any, **kwargs: Any) -> ReadBatch:
        batch = original(self, *args, **kwargs)
        seen.append(batch)
        return batch

    monkeypatch.setattr(SparkReader, "read", spy)
    return seen
