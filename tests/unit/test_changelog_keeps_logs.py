"""An append through delta-rs (the loader's backfill, the poller's fallback) writes log checkpoints
but deletes no old log file: the loader's role may not delete in the changelog."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakeinlet.changelog.reader import KEEP_LOGS, DeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.unit


def test_appends_past_the_log_retention_delete_no_log_file(tmp_path: Path) -> None:
    changelog = DeltaChangelog(str(tmp_path / "cl"))
    changelog.append(received_rows("b0", 1), {"poll_batch": "b0"})
    DeltaTable(changelog.uri).alter.set_table_properties(
        {"delta.checkpointInterval": "2", "delta.logRetentionDuration": "interval 0 seconds"},
        post_commithook_properties=KEEP_LOGS)
    for n in range(1, 5):
        changelog.append(received_rows(f"b{n}", 1), {"poll_batch": f"b{n}"})
    logs = sorted(p.name for p in (tmp_path / "cl" / "_delta_log").glob("*.json"))
    assert logs[0] == "00000000000000000000.json" and len(logs) == 6
    assert list((tmp_path / "cl" / "_delta_log").glob("*.checkpoint.parquet"))  # checkpoints still written
