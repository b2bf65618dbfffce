"""`lakeinlet.observe.frames` over recorded values: real targets' commits (Delta, Hudi, Iceberg), an SQS
receive, built frames."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import CommitInfo
from lakeinlet.errors import ConfigError
from lakeinlet.incremental.model import Outcome, TargetCommit
from lakeinlet.incremental.targets import commits as tc
from lakeinlet.observe import frames as observe

pytestmark = pytest.mark.unit
DATA = Path(__file__).resolve().parents[1] / "data" / "observe"
T0 = datetime(2026, 11, 22, 4, 0, tzinfo=UTC)
APP = "lakeinlet-loader"
FOUR_BATCHES = "commits_delta_four_batches.json"


def recorded(name: str) -> tuple[list[TargetCommit], dict[int, list[Outcome]]]:
    """A target's commits as its adapter returned them (newest first), and the outcomes of its
    batches by version, read as the port's `batches_after(-1)` reads them (inline, or Iceberg's
    outcome files)."""
    doc = json.loads((DATA / name).read_text())
    commits = [TargetCommit(c["version"], datetime.fromisoformat(c["timestamp"]), c["meta"], c["files"],
                            c["bytes"]) for c in doc["commits"]]
    sidecars = doc.get("sidecars") or {}

    def from_sidecar(c: TargetCommit) -> list[Outcome]:
        return [Outcome.from_list(v) for v in sidecars[c.meta["batch"]]]

    found = tc.batches_after(commits, APP, -1, from_sidecar if sidecars else None)
    return commits, {version: outcomes for version, _, outcomes in found}


def reset_commit(version: int, reason: str = "re-check", app_id: str = APP) -> TargetCommit:
    meta = {"operation": "checkpoint-reset", "app_id": app_id, "reason": reason,
            "start": '{"complete": 3, "format": 1, "offset": 0}',
            "position": '{"complete": 0, "format": 1, "offset": 0}'}
    return TargetCommit(version, datetime(2026, 11, 22, 4, 18, 20, tzinfo=UTC), meta)


def test_load_batches_from_recorded_commits() -> None:
    commits, outcomes = recorded(FOUR_BATCHES)
    frame = observe.batches_from_commits(commits, outcomes)
    assert frame["version"].tolist() == [1, 2, 3, 4]  # the create commit (0) is not a batch
    assert frame["objects"].tolist() == [4, 4, 4, 1]
    assert frame["not_loaded"].tolist() == [0, 1, 0, 0]
    assert frame["rows"].tolist() == [20, 15, 20, 5]
    assert frame["source_bytes"].tolist() == [1814, 1431, 1865, 470]
    assert frame["data_files"].tolist() == [2, 2, 2, 1]
    assert frame["data_bytes"].tolist() == [6859, 6781, 6879, 3354]
    assert frame["data_bytes"].sum() == 3432 + 3427 + 3427 + 3354 + 3445 + 3434 + 3354  # its add actions
    assert frame["start"].tolist() == ["start", "1@1", "2@1", "3@2"]
    assert frame["position"].tolist() == ["1@1", "2@1", "3@2", "3"]
    assert str(frame["timestamp"].dt.tz) == "UTC"


COMPACTED = {  # format → target versions, data files and bytes of the 3 loads and the reset
    "delta": ([1, 2, 3, 4], [2, 2, 0, 0], [6848, 6858, 0, 0]),
    "hudi": ([20261123123649995, 20261123123700782, 20261123123710299, 20261123123712696],
             [1, 1, 0, 0], [437664, 437669, 0, 0]),
    "iceberg": ([2, 3, 4, 5], [2, 2, 0, 0], [7021, 7031, 0, 0]),
}


@pytest.mark.parametrize("fmt", sorted(COMPACTED))
def test_every_format_gives_the_same_batches_after_compaction(fmt: str) -> None:
    # Recorded by tests/spark/test_observe_formats.py: 3 loads, a reset, then the format's own
    # compaction (Delta optimize + vacuum, Hudi clustering, Iceberg rewrite_data_files).
    commits, outcomes = recorded(f"compacted_{fmt}.json")
    frame = observe.batches_from_commits(commits, outcomes)
    versions, files, size = COMPACTED[fmt]
    assert frame["version"].tolist() == versions  # no create, optimize, vacuum or rewrite commit
    assert frame["operation"].tolist() == ["load", "load", "load", "checkpoint-reset"]
    assert frame[["objects", "loaded", "not_loaded", "rows"]].values.tolist() == \
        [[2, 2, 0, 10], [2, 2, 0, 10], [1, 0, 1, 0], [0, 0, 0, 0]]
    assert frame["source_bytes"].tolist() == [430 + 460, 460 + 464, 36, 0]  # the sample files, broken.jsonl
    assert (frame["start"].tolist(), frame["position"].tolist()) == (["start", "0@2", "1@1", "1"],
                                                                     ["0@2", "1@1", "1", "0"])
    assert (frame["data_files"].tolist(), frame["data_bytes"].tolist()) == (files, size)
    assert frame["reason"].tolist() == ["", "", "", "look again"]
    assert observe.batches_from_commits(commits, {})["objects"].sum() == 0  # outcomes come from the port


def test_a_commit_that_did_not_record_its_files_says_so() -> None:
    commits, outcomes = recorded(FOUR_BATCHES)
    older = [replace(c, files=None, bytes=None) for c in commits]  # a Delta table of an older loader
    frame = observe.batches_from_commits([reset_commit(5), *older], outcomes)
    assert frame["data_files"].isna().tolist() == [True] * 4 + [False]
    assert (frame["data_files"].iloc[-1], frame["data_bytes"].iloc[-1]) == (0, 0)  # a reset adds none
    assert observe.plot_load_batches(frame).axes[0].patches[-1].get_height() == 0


def test_resets_are_listed_with_their_reason_and_other_loaders_are_not() -> None:
    commits, outcomes = recorded(FOUR_BATCHES)
    history = [reset_commit(6, "other", "another"), reset_commit(5, "late files"), *commits]
    frame = observe.batches_from_commits(history, outcomes, app_id=APP)
    last = frame.iloc[-1]
    assert (last["operation"], last["start"], last["position"], last["reason"]) == \
        ("checkpoint-reset", "3", "0", "late files")
    assert (last["objects"], last["rows"], last["data_files"]) == (0, 0, 0)
    assert observe.batches_from_commits(history, outcomes, app_id="another")["version"].tolist() == [6]
    assert observe.batches_from_commits(history, outcomes)["version"].tolist() == [1, 2, 3, 4, 5, 6]


def test_counts_from_rows() -> None:
    rows = pd.DataFrame({"order_id": [1, 2, 2, 3, 3, 3, None],
                         "_source_key": ["a", "a", "b", "b", "c", "c", None]})
    assert observe.counts_from_rows(rows, "order_id") == {"rows": 7, "keys": 3, "duplicates": 2, "objects": 3}
    assert observe.counts_from_rows(rows.iloc[0:0], "order_id") == \
        {"rows": 0, "keys": 0, "duplicates": 0, "objects": 0}


def test_target_options_are_the_loaders_settings() -> None:
    catalog = observe.local_catalog("iceberg", "/tmp/x")
    assert catalog == {"iceberg_catalog_uri": "jdbc:sqlite:/tmp/x/iceberg-catalog.db"}
    assert observe.local_catalog("hudi", "/tmp/x") == {}
    assert observe.target_flags("iceberg", **catalog, ledger="s3://l/t_ledger") == [
        "--target-format", "iceberg", "--iceberg-catalog-uri", "jdbc:sqlite:/tmp/x/iceberg-catalog.db",
        "--ledger", "s3://l/t_ledger"]
    with pytest.raises(TypeError, match="iceberg_catalg_uri"):
        observe.open_target("/tmp/x/t", AwsSection(), "iceberg", iceberg_catalg_uri="typo")
    with pytest.raises(ConfigError, match="expected one of delta, hudi, iceberg"):
        observe.open_target("/tmp/x/t", AwsSection(), "paimon")


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
    commits, outcomes = recorded(FOUR_BATCHES)
    batches = observe.batches_from_commits([reset_commit(5), *commits], outcomes)
    fig = observe.plot_load_batches(batches)
    files_ax = fig.axes[0]
    assert [t.get_text() for t in files_ax.get_xticklabels()] == ["v1", "v2", "v3", "v4"]  # no reset
    assert len(files_ax.patches) == 3 * 4  # loaded, not loaded, data files per batch
    assert [p.get_height() for p in files_ax.patches[8:]] == [2, 2, 2, 1]
    infos = [CommitInfo(v, T0 + timedelta(seconds=3 * v), v + 1, {}) for v in range(5)]
    commits_fig = observe.plot_changelog_commits(observe.commits_from_infos(infos))
    assert [p.get_height() for p in commits_fig.axes[0].patches] == [1, 2, 3, 4, 5]
    lag_fig = observe.plot_lag(observe.lag_from(*lag_inputs()))
    assert sum(p.get_height() for p in lag_fig.axes[0].patches) == 2  # two loaded objects


def test_hudi_versions_are_instants_and_their_labels_slant() -> None:
    hudi = observe.batches_from_commits(*recorded("compacted_hudi.json"))
    labels = observe.plot_load_batches(hudi).axes[0].get_xticklabels()
    assert [t.get_text() for t in labels] == [f"v{v}" for v in COMPACTED["hudi"][0][:3]]
    assert {t.get_rotation() for t in labels} == {30}


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
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    with pytest.warns(UserWarning, match="lakeinlet jars --only s3a"):
        observe.local_env(tmp_path)
    assert "LAKEINLET_JARS" not in os.environ


def test_stop_spark_without_a_session_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hermetic: a session left by the spark tier in the same pytest run must not be stopped here.
    from pyspark.sql import SparkSession

    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    assert observe.stop_spark() is False
