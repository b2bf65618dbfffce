"""lakeinlet: load files that land in S3 into lakehouse tables, driven by S3 event notifications."""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__version__ = "0.1.0"
"""The source tree's version; what is installed is `installed_version()` (from the dist's metadata)."""


def wheel() -> str:
    """The wheel `python -m build` writes in a checkout (lakeinlet is not on PyPI), named for the
    installed version (a build's version comes from git): what hints install."""
    return f"dist/lakeinlet-{installed_version().removesuffix(' (not installed)')}-py3-none-any.whl"


def install_hint(extra: str) -> str:
    """The command that installs lakeinlet with `extra` (e.g. `spark35`, `local`): its wheel."""
    return f"pip install '{wheel()}[{extra}]'"


def installed_version() -> str:
    """The installed distribution's version (its metadata), or `__version__` plus a note when
    lakeinlet runs from a source tree that was never installed."""
    try:
        return metadata.version("lakeinlet")
    except metadata.PackageNotFoundError:
        return f"{__version__} (not installed)"


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """`--version` on a command: prints `lakeinlet <version>` and exits 0."""
    parser.add_argument("--version", action="version", version=f"lakeinlet {installed_version()}")
