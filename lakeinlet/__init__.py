"""lakeinlet: load files that land in S3 into lakehouse tables, driven by S3 event notifications."""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

__version__ = "0.1.0"
"""The source tree's version; what is installed is `installed_version()` (from the dist's metadata)."""


WHEEL = f"dist/lakeinlet-{__version__}-py3-none-any.whl"
"""The wheel `python -m build` writes in a checkout (lakeinlet is not on PyPI): what hints install."""


def install_hint(extra: str) -> str:
    """The command that installs lakeinlet with `extra` (e.g. `spark35`, `local`): its wheel."""
    return f"pip install '{WHEEL}[{extra}]'"


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
