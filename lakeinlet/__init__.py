"""lakeinlet: load files that land in S3 into lakehouse tables, driven by S3 event notifications."""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING

from lakeinlet.versioning import BASE

if TYPE_CHECKING:
    import argparse

def _dist_version() -> str | None:
    """The installed distribution's version (its metadata: a build's comes from git), None when
    lakeinlet runs from a source tree that was never installed."""
    try:
        return metadata.version("lakeinlet")
    except metadata.PackageNotFoundError:
        return None


__version__ = _dist_version() or BASE
"""The version this code runs as: the installed one, else the version before the first tag."""


def wheel() -> str:
    """The wheel `python -m build` writes in a checkout (lakeinlet is not on PyPI), named for the
    installed version: what hints install."""
    return f"dist/lakeinlet-{__version__}-py3-none-any.whl"


def install_hint(extra: str) -> str:
    """The command that installs lakeinlet with `extra` (e.g. `spark35`, `local`): its wheel."""
    return f"pip install '{wheel()}[{extra}]'"


def installed_version() -> str:
    """The installed version, or the base version plus a note when never installed."""
    return _dist_version() or f"{BASE} (not installed)"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """`--version` on a command: prints `lakeinlet <version>` and exits 0."""
    parser.add_argument("--version", action="version", version=f"lakeinlet {installed_version()}")
