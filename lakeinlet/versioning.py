"""The version a build carries, from git (`setup.py` calls it): a tag `vX.Y.Z` is `X.Y.Z`, N commits
after it `X.Y.(Z+1).devN+g<sha>`, no tag `BASE.devN+g<sha>`; an sdist (no git) keeps its PKG-INFO's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

BASE = "0.1.0"
"""The version before the first tag, and the fallback outside git and outside an sdist."""
UNKNOWN = f"{BASE}+unknown"
DESCRIBED = re.compile(r"^v(?P<tag>\d+(?:\.\d+)*)-(?P<n>\d+)-g(?P<sha>[0-9a-f]+)(?P<dirty>-dirty)?$")


def from_describe(described: str | None, commits: int, sha: str, dirty: bool) -> str:
    """The version for `git describe --tags --long --match 'v[0-9]*' --dirty` output (None: no tag),
    the commit count and the short sha of HEAD (used without a tag), and an unclean work tree."""
    found = DESCRIBED.match(described or "")
    if found is None:
        return f"{BASE}.dev{commits}+g{sha}" + (".dirty" if dirty else "")
    tag, n = found["tag"], int(found["n"])
    if n == 0:
        return tag + ("+dirty" if found["dirty"] else "")
    parts = tag.split(".")
    parts[-1] = str(int(parts[-1]) + 1)
    return f"{'.'.join(parts)}.dev{n}+g{found['sha']}" + (".dirty" if found["dirty"] else "")


def source_version(root: Path) -> str:
    """The version of the tree at `root`: from git when `root` is a repository's top folder, else
    from the PKG-INFO of an unpacked sdist, else `UNKNOWN`."""
    if (found := _git_version(root)) is not None:
        return found
    info = root / "PKG-INFO"
    if info.is_file():
        for line in info.read_text(encoding="utf-8").splitlines():
            if line.startswith("Version: "):
                return line.removeprefix("Version: ").strip()
    return UNKNOWN


def _git_version(root: Path) -> str | None:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root.resolve():  # no git, or a folder inside another repo
        return None
    described = git("describe", "--tags", "--long", "--match", "v[0-9]*", "--dirty")
    commits, sha = git("rev-list", "--count", "HEAD"), git("rev-parse", "--short", "HEAD")
    if commits is None or sha is None:
        return None
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return from_describe(described, int(commits), sha, dirty)
