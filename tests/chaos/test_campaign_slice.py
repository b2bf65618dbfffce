"""A small fixed-seed slice of the chaos campaign (`make chaos` runs the full one): one delta run
with faults of every kind, pollers and the loader killed at random, `maintain` beside the loader,
duplicate and reordered notifications and overwrites; nothing lost, nothing duplicated, no message
left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chaos import ensure_mitmproxy
from chaos.plan import FAULT_KINDS
from chaos.run import RunSettings, execute
from chaos.workload import WorkloadSettings
from tests.spark.conftest import JARS

# The slice runs once per `make test` (on the 3.5 line); its faults are in the S3 and SQS calls and the
# processes' kills, which the Spark line does not change.
pytestmark = [pytest.mark.chaos, pytest.mark.spark, pytest.mark.integration, pytest.mark.test_all("4.1")]


def test_a_short_delta_run_under_faults_and_kills_loads_every_row_exactly_once(tmp_path: Path) -> None:
    ensure_mitmproxy()
    settings = RunSettings(index=0, seed=20261123, target_format="delta", source_format="json",
                           chaos_seconds=45, fault_rate=0.15, loaders=1,
                           kill_every={"poller": 6.0, "loader": 40.0}, backfill_every=20.0,
                           workload=WorkloadSettings(source_format="json", pace_seconds=1.0,
                                                     overwrite_share=0.15, duplicate_share=0.1,
                                                     reorder_share=0.1, quiet_share=0.1),
                           jars=os.environ.get("LAKEINLET_JARS") or JARS)
    result = execute(settings, tmp_path, say=lambda _: None)
    report = result.report
    assert result.converged, "the clean convergence failed: see clean-*.log under " + str(tmp_path)
    assert report.ok, "\n".join(result.suspects)
    assert report.expected > 0 and report.found >= report.expected
    assert result.kills.get("poller", 0) >= 3
    assert len(result.faults) >= len(FAULT_KINDS) // 2 and sum(result.faults.values()) >= 30
    assert result.compactions[2] >= 1  # maintain ran beside the loader (it rewrites once a table exists)
    assert sum(result.crafted.values()) > 0 and result.versions > result.objects  # overwrites happened

