"""`lakeinlet.observe` over recorded values: a real target history, an SQS receive, built frames."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from lakeinlet import observe
from lakeinlet.changelog import CommitInfo

pytestmark = pytest.mark.unit
DATA = Path(__file__).resolve().parents[1] / "data" / "observe"
T0 = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)


def recorded_history() -> dict[str, Any]:
    """A target written by the loader on moto: 4 load commits, one holding a corrupt object."""
    return dict(json.loads((DATA / "target_history.json").read_text()))


def reset_entry(version: int, reason: str = "re-check") -> dict[str, Any]:
    return {"version": version, "timestamp": 1795321100000, "operation": "WRITE",
            "lakeinlet.operation": "checkpoint-reset", "lakeinlet.app_id": "lakeinlet-loader",
            "lakeinlet.start": '{"complete": 3, "format": 1, "offset": 0}',
            "lakeinlet.position": '{"complete": 0, "format": 1, "offset": 0}', "lakeinlet.reason": reason}


def test_load_batches_from_a_recorded_history() -> None:
    rec = recorded_history()
    frame = observe.batches_from_history(rec["history"], rec["add_actions"])
    assert frame["version"].tolist() == [1, 2, 3, 4]  # the create commit (0) is not a batch
    assert frame["objects"].tolist() == [4, 4, 4, 1]
    assert frame["not_loaded"].tolist() == [0, 1, 0, 0]
    assert frame["rows"].tolist() == [20, 15, 20, 5]
    assert frame["source_bytes"].tolist() == [1814, 1431, 1865, 470]
    assert frame["data_files"].tolist() == [2, 2, 2, 1]
    assert frame["data_bytes"].sum() == sum(a["size_bytes"] for a in rec["add_actions"])
    assert frame["start"].tolist() == ["-1", "0+1", "1+1", "2+2"]
    assert frame["position"].tolist() == ["0+1", "1+1", "2+2", "3"]
    assert str(frame["timestamp"].dt.tz) == "UTC"


def test_files_are_matched_to_batches_by_folder_when_stats_are_missing() -> None:
    rec = recorded_history()
    adds = [{"path": a["path"], "size_bytes": a["size_bytes"]} for a in rec["add_actions"]]
    frame = observe.batches_from_history(rec["history"], adds)
    assert frame["data_files"].tolist() == [2, 2, 2, 1]


def test_resets_are_listed_with_their_reason_and_other_loaders_are_not() -> None:
    rec = recorded_history()
    history = [reset_entry(5, "late files"), *rec["history"]]
    frame = observe.batches_from_history(history, rec["add_actions"], app_id="lakeinlet-loader")
    last = frame.iloc[-1]
    assert (last["operation"], last["start"], last["position"], last["reason"]) == \
        ("checkpoint-reset", "3", "0", "late files")
    assert (last["objects"], last["rows"], last["data_files"]) == (0, 0, 0)
    assert observe.batches_from_history(history, rec["add_actions"], app_id="another").empty


def test_changelog_commits_frame_reads_commit_metadata() -> None:
    infos = [CommitInfo(0, T0, 3, {"source_id": "events", "messages": "5", "poll_batch": "b1"}),
             CommitInfo(1, T0 + timedelta(seconds=4), 2, {"source": "backfill", "poll_batch": "backfill-x"})]
    frame = observe.commits_from_infos(infos)
    assert frame["events"].tolist() == [3, 2]
    assert frame["messages"].tolist() == [5, 0]
    assert frame["source"].tolist() == ["events", "backfill"]
    assert observe.commits_from_infos([]).empty


def lag_inputs() -> tuple[pd.DataFrame, ...]:
    ledger = pd.DataFrame({
        "key": ["a", "b", "bad"], "event_id": ["e1", "e2", "e3"],
        "event_time": [T0, T0 + timedelta(seconds=1), T0], "changelog_version": [0, 1, 0],
        "target_version": [1, 2, 1], "rows": [5, 5, 0], "status": ["loaded", "loaded", "corrupt"]})
    changelog = pd.DataFrame({"event_id": ["e1", "e1", "e2", "e3"],  # e1 delivered twice
                              "received_at": [T0 + timedelta(seconds=2)] * 2 +
                                             [T0 + timedelta(seconds=3), T0]})
    commits = pd.DataFrame({"version": [0, 1], "timestamp": [T0 + timedelta(seconds=4),
                                                               T0 + timedelta(seconds=5)]})
    batches = pd.DataFrame({"version": [1, 2], "timestamp": [T0 + timedelta(seconds=30),
                                                               T0 + timedelta(seconds=61)]})
    return ledger, changelog, commits, batches


def test_lag_splits_event_to_loaded_into_its_stages() -> None:
    lag = observe.lag_from(*lag_inputs())
    assert lag["key"].tolist() == ["a", "b"]  # the corrupt object has no loaded time
    assert lag["queue_s"].tolist() == [2.0, 2.0]
    assert lag["changelog_s"].tolist() == [2.0, 2.0]
    assert lag["load_s"].tolist() == [26.0, 56.0]
    assert lag["lag_s"].tolist() == [30.0, 60.0]
    assert (lag["queue_s"] + lag["changelog_s"] + lag["load_s"] == lag["lag_s"]).all()
    assert observe.lag_summary(lag) == {"objects": 2, "p50_s": 45.0, "p95_s": 58.5, "max_s": 60.0}


def test_lag_summary_of_nothing() -> None:
    empty = observe.lag_from(*lag_inputs()).iloc[0:0]
    assert observe.lag_summary(empty)["objects"] == 0


def test_quarantine_lists_objects_not_fully_loaded() -> None:
    ledger = pd.DataFrame({
        "key": ["ok", "partial", "broken", "gone"], "status": ["loaded", "loaded", "corrupt", "missing"],
        "reason": ["", "2 malformed records dropped", "no parseable record", "object not found"],
        "rows": [5, 3, 0, 0], "bad_records": [0, 2, 0, 0], "bytes": [1, 2, 3, 4],
        "changelog_version": [0, 0, 1, 1], "target_version": [1, 1, 2, 2], "loaded_at": [T0] * 4})
    assert observe.quarantined_from_ledger(ledger)["key"].tolist() == ["broken", "gone", "partial"]
    assert observe.quarantined_from_ledger(ledger, partial=False)["status"].tolist() == ["corrupt", "missing"]


def test_dead_letters_with_the_parsers_reason() -> None:
    messages = json.loads((DATA / "dlq_receive.json").read_text())["Messages"]
    frame = observe.dlq_from_messages(messages)
    assert frame["receive_count"].tolist() == [2, 6, 5]
    assert frame["reason"][0].startswith("body is not JSON")  # the message id is its own column
    assert "expected an S3 event" in frame["reason"][1]
    assert frame["reason"][2] == ""  # a valid event that kept failing downstream: no parse error
    assert frame["sent_at"][0] == datetime(2026, 11, 22, 4, 35, 4, 685000, tzinfo=UTC)


def test_figures_have_one_mark_per_commit_and_batch() -> None:
    rec = recorded_history()
    batches = observe.batches_from_history([reset_entry(5), *rec["history"]], rec["add_actions"])
    fig = observe.plot_load_batches(batches)
    files_ax = fig.axes[0]
    assert [t.get_text() for t in files_ax.get_xticklabels()] == ["v1", "v2", "v3", "v4"]  # no reset
    assert len(files_ax.patches) == 3 * 4  # loaded, not loaded, data files per batch
    infos = [CommitInfo(v, T0 + timedelta(seconds=3 * v), v + 1, {}) for v in range(5)]
    commits_fig = observe.plot_changelog_commits(observe.commits_from_infos(infos))
    assert [p.get_height() for p in commits_fig.axes[0].patches] == [1, 2, 3, 4, 5]
    lag_fig = observe.plot_lag(observe.lag_from(*lag_inputs()))
    assert sum(p.get_height() for p in lag_fig.axes[0].patches) == 2  # two loaded objects


def test_figures_render_to_png(tmp_path: Path) -> None:
    lag = observe.lag_from(*lag_inputs())
    out = tmp_path / "lag.png"
    observe.plot_lag(lag).savefig(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    observe.plot_lag(lag.iloc[0:0]).savefig(tmp_path / "empty.png")  # nothing loaded yet: no crash


def test_local_env_sets_only_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".jars").mkdir()
    (tmp_path / "notebooks").mkdir()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mine")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://elsewhere")
    for name in ("LAKEINLET_JARS", "SPARK_LOCAL_IP", "AWS_SECRET_ACCESS_KEY", "PYSPARK_PYTHON",
                 "AWS_DEFAULT_REGION"):  # monkeypatch restores them after local_env sets them
        monkeypatch.delenv(name, raising=False)
    done = observe.local_env(tmp_path / "notebooks")
    assert done["LAKEINLET_JARS"] == str(tmp_path / ".jars")
    assert done["SPARK_LOCAL_IP"] == "127.0.0.1" and "AWS_ACCESS_KEY_ID" not in done
    assert os.environ["AWS_ACCESS_KEY_ID"] == "mine" and "AWS_ENDPOINT_URL" not in os.environ


def test_local_env_warns_when_no_jars_can_be_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAKEINLET_JARS", raising=False)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    with pytest.warns(UserWarning, match="make jars"):
        observe.local_env(tmp_path)
    assert "LAKEINLET_JARS" not in os.environ


def test_stop_spark_without_a_session_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hermetic: a session left by the spark tier in the same pytest run must not be stopped here.
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    assert observe.stop_spark() is False
