"""A delta-rs append that loses every race for a version (CommitFailedError after its retries) is
tried again after a pause, a bounded number of rounds; nothing is committed twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from deltalake.exceptions import CommitFailedError

import lakeinlet.changelog.reader as changelog_mod
from lakeinlet.changelog.reader import DeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.unit


def _losing(times: int, calls: list[Any]) -> Any:
    real = changelog_mod.write_deltalake

    def write(*args: Any, **kwargs: Any) -> None:
        calls.append(kwargs["commit_properties"])
        if len(calls) <= times:
            raise CommitFailedError("Failed to commit transaction: 15")
        real(*args, **kwargs)
    return write


def test_an_append_that_lost_every_race_is_tried_again(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(changelog_mod, "ROUND_PAUSE_S", 0.0)
    monkeypatch.setattr(changelog_mod, "write_deltalake", _losing(2, calls))
    changelog = DeltaChangelog(str(tmp_path / "cl"))
    assert changelog.append(received_rows("b0", 3), {"poll_batch": "b0"}) == 0
    assert len(calls) == 3
    assert [(c.version, c.rows) for c in changelog.commits()] == [(0, 3)]


def test_an_append_gives_up_after_its_rounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(changelog_mod, "ROUND_PAUSE_S", 0.0)
    monkeypatch.setattr(changelog_mod, "write_deltalake", _losing(99, calls))
    changelog = DeltaChangelog(str(tmp_path / "cl"))
    with pytest.raises(CommitFailedError):
        changelog.append(received_rows("b0", 3), {"poll_batch": "b0"})
    assert len(calls) == changelog_mod.COMMIT_ROUNDS
    assert changelog.head_version() == -1
