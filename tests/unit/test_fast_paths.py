"""The fast-path switch: each name turns its fast path off and the plain path it shadows serves
(the changelog's here; the reader's in the fast-paths-off run of the format suite, `make test`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakeinlet import fast_paths
from lakeinlet.changelog import tail
from lakeinlet.changelog.writer import OpenDeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("value", "off"), [
    ("", set()), ("on", set()), ("off", set(fast_paths.NAMES)), ("none", set(fast_paths.NAMES)),
    ("changelog-tail, one-pass", {"changelog-tail", "one-pass"})])
def test_the_switch_turns_off_what_it_names(monkeypatch: pytest.MonkeyPatch, value: str,
                                            off: set[str]) -> None:
    monkeypatch.setenv(fast_paths.VARIABLE, value)
    assert {n for n in fast_paths.NAMES if not fast_paths.enabled(n)} == off


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fast path 'file_index'"):
        fast_paths.enabled("file_index")


@pytest.mark.parametrize("switch", ["on", "blind-append"])
def test_the_changelog_is_the_same_through_either_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         switch: str) -> None:
    monkeypatch.setenv(fast_paths.VARIABLE, switch)
    writer = OpenDeltaChangelog(str(tmp_path / "changelog"))
    for i in range(3):
        writer.append(received_rows(f"b{i}", 2), {"poll_batch": f"b{i}"})
    assert (writer._appender is not None) == (switch == "on"), "the switch decides which writer commits"
    dt = DeltaTable(writer.uri)
    batches = dt.to_pyarrow_dataset().to_table().column("poll_batch").to_pylist()
    assert dt.version() == 2 and sorted(batches) == ["b0", "b0", "b1", "b1", "b2", "b2"]
    rows = writer.read_versions(-1, 2)
    assert rows.num_rows == 6 and sorted(set(rows.column("_commit_version").to_pylist())) == [0, 1, 2]


def test_with_the_tail_off_reads_go_through_delta_rs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = OpenDeltaChangelog(str(tmp_path / "changelog"))
    for i in range(3):
        writer.append(received_rows(f"b{i}", 2), {"poll_batch": f"b{i}"})
    monkeypatch.setenv(fast_paths.VARIABLE, "changelog-tail")

    def no_tail(*args: object) -> None:
        raise AssertionError("the tail was read with its switch off")

    monkeypatch.setattr(tail.ChangelogTail, "rows", no_tail)
    monkeypatch.setattr(tail.ChangelogTail, "commits", no_tail)
    assert writer.read_versions(0, 2).num_rows == 4
    assert [c.version for c in writer.commits(0, 2)] == [1, 2]
