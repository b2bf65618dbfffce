"""Package discovery for folders that ship under other names (`sources/` → lakeinlet.sources,
`incremental/` → lakeinlet.incremental: `[tool.setuptools] package-dir` in pyproject.toml), which
`[tool.setuptools.packages.find]` cannot express, and the version from git (`lakeinlet/versioning.py`).
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from setuptools import find_packages, setup


def discovered() -> list[str]:
    """Each mapped package and every package below its folder, named under it; a subfolder of
    `incremental/` is `lakeinlet.incremental.<sub>`, never a top-level package."""
    pyproject = tomllib.loads(Path(__file__).with_name("pyproject.toml").read_text(encoding="utf-8"))
    found: list[str] = []
    for package, folder in pyproject["tool"]["setuptools"]["package-dir"].items():
        found += [package, *(f"{package}.{sub}" for sub in find_packages(folder))]
    return sorted(found)


def version() -> str:
    """The build's version (`lakeinlet/versioning.py`, loaded by path: lakeinlet is not installed
    while it is being built)."""
    here = Path(__file__).resolve().parent
    path = here / "lakeinlet" / "versioning.py"
    spec = importlib.util.spec_from_file_location("lakeinlet_versioning", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.source_version(here))


setup(packages=discovered(), version=version())
