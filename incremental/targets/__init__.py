"""Target tables behind one port: Delta, Hudi and Iceberg adapters, picked in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lakeinlet.errors import ConfigError
from lakeinlet.incremental.ports import TargetPort
from lakeinlet.incremental.settings import LoaderConfig

FORMATS = ("delta", "hudi", "iceberg")


def build_target(config: LoaderConfig, spark: Callable[[], Any]) -> TargetPort:
    """The adapter for `--target-format` (`spark` starts the session only when a target needs it)."""
    t, aws = config.tables, config.aws
    if t.target_format == "delta":
        from lakeinlet.incremental.targets.delta import DeltaTarget

        return DeltaTarget(t.table or "", aws, t.app_id, t.partition_by, t.spark_scheme)
    raise ConfigError([f"--target-format {t.target_format}: not available in this build"])


def spark_needs(config: LoaderConfig) -> tuple[list[str], dict[str, str], dict[str, tuple[str, str]]]:
    """Jar groups, session settings and required classes of the target format (see lakeinlet.spark)."""
    return [], {}, {}
