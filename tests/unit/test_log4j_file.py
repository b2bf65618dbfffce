"""The JVM's log4j2 configuration is a file this process made (0600, O_EXCL, never through a link)
in a private folder of this user; a planted link, file or foreign folder is never used."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from lakeinlet import log4j

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def shared_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`tmp_path` as the machine's shared temp folder, no XDG_RUNTIME_DIR, nothing made yet."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(log4j, "_MADE", {})
    return tmp_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_file_is_private_and_in_a_private_folder(shared_tmp: Path) -> None:
    path = Path(log4j.log4j2_file("ERROR"))
    assert path.parent == shared_tmp / f"lakeinlet-{os.getuid()}"
    assert _mode(path.parent) == 0o700 and _mode(path) == 0o600
    assert "rootLogger.level = error" in path.read_text() and path.name.endswith("-error.properties")
    assert log4j.log4j2_file("ERROR") == str(path)  # made once per process and level
    assert log4j.log4j2_file("INFO") != str(path)


def test_files_planted_at_the_old_predictable_names_are_never_used_or_written_through(
        shared_tmp: Path) -> None:
    victim = shared_tmp / "victim.txt"
    victim.write_text("precious")
    (shared_tmp / f"lakeinlet-log4j2-error.{os.getpid()}").symlink_to(victim)
    planted = shared_tmp / "lakeinlet-log4j2-error.properties"
    planted.write_text(log4j._text("ERROR"))  # what an attacker would plant, then swap
    path = log4j.log4j2_file("ERROR")
    assert victim.read_text() == "precious"
    assert Path(path) != planted and Path(path).parent.name == f"lakeinlet-{os.getuid()}"


def test_a_symlink_planted_as_the_user_folder_is_not_followed(shared_tmp: Path) -> None:
    elsewhere = shared_tmp / "attacker"
    elsewhere.mkdir(mode=0o700)
    (shared_tmp / f"lakeinlet-{os.getuid()}").symlink_to(elsewhere)
    path = Path(log4j.log4j2_file("ERROR"))
    assert list(elsewhere.iterdir()) == []
    assert path.parent.parent == shared_tmp and path.parent.name != f"lakeinlet-{os.getuid()}"
    assert _mode(path.parent) == 0o700 and _mode(path) == 0o600


def test_a_world_writable_user_folder_is_not_used(shared_tmp: Path) -> None:
    folder = shared_tmp / f"lakeinlet-{os.getuid()}"
    folder.mkdir()
    folder.chmod(0o777)
    assert Path(log4j.log4j2_file("ERROR")).parent != folder
    assert list(folder.iterdir()) == []


def test_another_users_folder_is_not_used(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = os.getuid()
    folder = shared_tmp / f"lakeinlet-{mine + 4242}"
    folder.mkdir(mode=0o700)  # made by the real user: another one to a process running as uid+4242
    monkeypatch.setattr(os, "getuid", lambda: mine + 4242)
    assert log4j.unsafe(folder) == f"belongs to uid {mine}"
    assert Path(log4j.log4j2_file("ERROR")).parent != folder
    assert list(folder.iterdir()) == []


def test_a_file_changed_after_it_was_made_is_made_anew(shared_tmp: Path) -> None:
    first = Path(log4j.log4j2_file("ERROR"))
    first.chmod(0o644)
    second = Path(log4j.log4j2_file("ERROR"))
    assert second != first and _mode(second) == 0o600


def test_the_users_runtime_folder_is_preferred(shared_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = shared_tmp / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert Path(log4j.log4j2_file("WARN")).parent == runtime / "lakeinlet"


def test_a_failed_tasks_repeated_error_lines_are_denied_and_every_other_line_kept() -> None:
    """A task's failure reaches the driver as the job's exception, which lakeinlet handles or reports:
    Executor's "Exception in task" stack and TaskSetManager's "aborting job" line only repeat it
    (the Spark batch test of one object of each kind checks the console itself)."""
    text = log4j._text("ERROR")
    for name, (logger, regex) in log4j.REPEATED.items():
        assert f"logger.{name}.name = {logger}\nlogger.{name}.level = error\n" in text
        assert f"logger.{name}.filter.repeated.regex = {regex}\n" in text
        assert (f"logger.{name}.filter.repeated.onMatch = DENY\n"
                f"logger.{name}.filter.repeated.onMismatch = NEUTRAL") in text
    assert text.count("onMatch = DENY") == 2 and "rootLogger.level = error" in text
    assert "DENY" not in log4j._text("DEBUG")  # at DEBUG the JVM says everything
