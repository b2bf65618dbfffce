"""Command lines of the jobs a chaos run starts, and the environment they run in: settings under
which a killed job's work comes back within the run."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from lakeinlet.dev.emulator import TEST_CREDENTIALS
from lakeinlet.dev.samples import SCHEMA_DDL

VISIBILITY_TIMEOUT = 20
"""Pollers run continuously with short batches (`--batch-seconds 2`) and this short visibility
timeout, so the messages a killed poller held come back within the run."""
LEASE_SECONDS = 30
"""Hudi loaders' writer lease (the default is 300 s): a killed holder blocks the other loader this
long, not five minutes."""


@dataclass(frozen=True)
class RunTables:
    """Where one run's jobs read and write (URLs through the proxy, or straight to the emulator)."""

    endpoint: str
    queue_url: str
    landing: str
    lake: str
    target_format: str
    source_format: str
    iceberg_db: Path

    @property
    def changelog(self) -> str:
        return f"s3://{self.lake}/changelog"

    @property
    def table(self) -> str:
        return f"s3://{self.lake}/orders"


def job_env(jars: str | None) -> dict[str, str]:
    """The jobs' environment: test credentials, loopback Spark, this interpreter for workers."""
    env = os.environ | TEST_CREDENTIALS | {"PYSPARK_PYTHON": sys.executable,
                                           "PYSPARK_DRIVER_PYTHON": sys.executable,
                                           "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1")}
    env.pop("AWS_ENDPOINT_URL", None)
    if jars:
        env["LAKEINLET_JARS"] = jars
    return env


def poller_argv(t: RunTables, until_empty: bool = False) -> list[str]:
    argv = [sys.executable, "-m", "lakeinlet.sources", "--queue-url", t.queue_url,
            "--changelog", t.changelog, "--endpoint-url", t.endpoint, "--bucket", t.landing,
            "--receivers", "2", "--wait-seconds", "2", "--batch-seconds", "2",
            "--visibility-timeout", str(VISIBILITY_TIMEOUT), "--log-format", "json"]
    return [*argv, "--until-empty"] if until_empty else argv


def loader_argv(t: RunTables, mode: str = "--continuous") -> list[str]:
    """`lakeinlet-load run <mode>` (`--continuous` or `--drain`) for the run's target, on Spark
    `local[1]` (two loaders and three pollers share the machine with the emulator and the proxy)."""
    return [sys.executable, "-m", "lakeinlet.incremental.job", "run", mode, "--interval-seconds", "1",
            *_tables(t), "--source-format", t.source_format, "--schema", SCHEMA_DDL,
            "--master", "local[1]", "--shuffle-partitions", "2",
            "--log-format", "json"]


def backfill_argv(t: RunTables, prefix: str) -> list[str]:
    """`lakeinlet-load backfill` of the landing bucket's `prefix` (objects nobody notified)."""
    return [sys.executable, "-m", "lakeinlet.incremental.job", "backfill", "--bucket", t.landing,
            "--prefix", prefix, *_tables(t), "--log-format", "json"]


def maintain_argv(t: RunTables) -> list[str]:
    """`lakeinlet-load maintain` of the run's target beside the live loaders, with a file size above
    anything a run writes, so every pass rewrites the small files the loaders committed since the
    last one and its commit races theirs."""
    return [sys.executable, "-m", "lakeinlet.incremental.job", "maintain", *_tables(t),
            "--target-file-mb", "1", "--retention-hours", "1", "--master", "local[1]",
            "--shuffle-partitions", "2", "--log-format", "json"]


def _tables(t: RunTables) -> list[str]:
    argv = ["--changelog", t.changelog, "--table", t.table, "--target-format", t.target_format,
            "--endpoint-url", t.endpoint]
    if t.target_format == "hudi":
        argv += ["--lease-seconds", str(LEASE_SECONDS)]
    if t.target_format == "iceberg":
        argv += ["--iceberg-catalog-uri", f"jdbc:sqlite:{t.iceberg_db}", "--iceberg-table", "chaos.orders"]
    return argv
