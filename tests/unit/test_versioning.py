"""The build's version comes from git: a tag, the commits after it, or none yet; an sdist keeps its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lakeinlet.versioning import UNKNOWN, from_describe, source_version

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("described", "dirty", "version"), [
    (None, False, "0.1.0.dev12+gabc1234"),
    (None, True, "0.1.0.dev12+gabc1234.dirty"),
    ("v1.4.2-0-gdef5678", False, "1.4.2"),
    ("v1.4.2-0-gdef5678-dirty", True, "1.4.2+dirty"),
    ("v1.4.2-3-gdef5678", False, "1.4.3.dev3+gdef5678"),
    ("v2.0-5-gdef5678-dirty", True, "2.1.dev5+gdef5678.dirty"),
])
def test_versions_from_git_describe(described: str | None, dirty: bool, version: str) -> None:
    assert from_describe(described, 12, "abc1234", dirty) == version


def test_a_checkout_an_sdist_and_neither(tmp_path: Path) -> None:
    """Issue 36: every build said 0.1.0."""
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (repo / "f").write_text("1")
    git("add", "f")
    git("commit", "-qm", "one")
    sha = git("rev-parse", "--short", "HEAD")
    assert source_version(repo) == f"0.1.0.dev1+g{sha}"
    git("tag", "v0.2.0")
    assert source_version(repo) == "0.2.0"
    (repo / "f").write_text("2")
    assert source_version(repo) == "0.2.0+dirty"
    inner = repo / "sdist"  # an unpacked sdist inside another checkout takes nothing from its git
    inner.mkdir()
    assert source_version(inner) == UNKNOWN
    (inner / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: lakeinlet\nVersion: 0.2.1.dev3+g1234567\n")
    assert source_version(inner) == "0.2.1.dev3+g1234567"
