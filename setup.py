"""Package discovery for folders that ship under other names (`sources/` → lakeinlet.sources,
`incremental/` → lakeinlet.incremental: `[tool.setuptools] package-dir` in pyproject.toml), which
`[tool.setuptools.packages.find]` cannot express. Everything else is in pyproject.toml.
"""

from __future__ import annotations

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


setup(packages=discovered())
