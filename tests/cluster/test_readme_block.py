"""docs/deploy/standalone.md's block and the cluster tier stay in step: the tier runs the block's own
lines, so this checks only what it cannot see by running them (no Spark, no network)."""

from __future__ import annotations

import re

import pytest

from lakeinlet import jars
from tests.cluster.flow import EXECUTOR_PY_VENV, VARIABLES, block, parse

pytestmark = pytest.mark.unit
GROUPS = {"delta": ["s3a"], "hudi": ["s3a", "hudi"], "iceberg": ["s3a", "iceberg"]}


def test_the_block_names_only_the_variables_the_tier_sets() -> None:
    used = set(re.findall(r"\$\{?([A-Z_]+)", block())) - {"PKG"}
    assert used == set(VARIABLES), f"the block uses {sorted(used)}; the tier sets {sorted(VARIABLES)}"


def test_every_submit_is_client_mode_with_the_drivers_python_named() -> None:
    flow = parse()
    for cmd in [flow.poll, *flow.loads.values()]:
        assert "--deploy-mode client" in cmd and 'spark.pyspark.driver.python="$VENV/bin/python"' in cmd, cmd


@pytest.mark.parametrize("target_format", sorted(GROUPS))
def test_each_load_takes_its_jars_from_lakeinlet_jars_packages(target_format: str) -> None:
    cmd = parse().loads[target_format]
    found = re.search(r"\$\(lakeinlet jars --packages((?: --only \w+)+)\)", cmd)
    assert found, f"the {target_format} load does not take --packages from `lakeinlet jars --packages`"
    assert found.group(1).split()[1::2] == GROUPS[target_format]
    assert set(GROUPS[target_format]) <= set(jars.ALL_GROUPS)  # groups of lakeinlet's catalogue


def test_without_the_archive_executors_run_the_venvs_python() -> None:
    flow = parse()
    for fmt in flow.loads:
        shipped, local = flow.load(fmt, archive=True), flow.load(fmt, archive=False)
        assert "--archives" in shipped and "--archives" not in local
        assert EXECUTOR_PY_VENV in local and "./environment" not in local
