"""One local[2] SparkSession for the whole pytest run, with s3a pointed at the moto server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.emulator import MotoServer
from lakeinlet.spark import SparkSection, get_session

JARS = os.environ.get("LAKEINLET_JARS") or str(Path(__file__).resolve().parents[2] / ".jars")


@pytest.fixture(scope="session")
def spark(moto_server: MotoServer) -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    section = SparkSection(master="local[2]", jars=JARS, shuffle_partitions=2)
    session = get_session(section, moto_server.endpoint, "lakeinlet-tests", ["s3a"])
    yield session
    session.stop()
