"""What users install: lakeinlet's sdist and wheel built from this checkout, and the wheel installed
with its dependencies from PyPI into a fresh virtualenv outside the checkout (no editable install
to hide a package the build left out). Shared by the packaging tests and the cluster tier.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lakeinlet import jars

ROOT = Path(__file__).resolve().parents[1]
BUILD_TOOL = "build>=1.2"


@dataclass(frozen=True)
class Dists:
    """The sdist and the wheel built from it (as `python -m build` does)."""

    sdist: Path
    wheel: Path


def _outside_checkout(folder: Path) -> Path:
    folder = folder.resolve()
    if folder.is_relative_to(ROOT):
        raise ValueError(f"expected a folder outside the checkout {ROOT}, found {folder}: "
                         "pass a tmp_path_factory folder")
    return folder


def _venv(folder: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    return folder


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def build(folder: Path) -> Dists:
    """Build the sdist from the checkout, then the wheel from the sdist, into `folder/dist`.

    Building the wheel from the unpacked sdist (in isolated build environments, with the
    setuptools pyproject asks for) means the wheel cannot hold a file the sdist left out, nor a
    stale one from a `build/` folder in the checkout. The `build` tool lives in its own venv.
    """
    folder = _outside_checkout(folder)
    tool = _venv(folder / "build-env")
    _pip(tool, "install", BUILD_TOOL)
    out = folder / "dist"
    done = subprocess.run([str(venv_python(tool)), "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"python -m build failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise RuntimeError(f"expected one sdist and one wheel in {out}, found {sdists + wheels}")
    return Dists(sdists[0], wheels[0])


def install(folder: Path, wheel: Path, extras: Sequence[str] = ()) -> Path:
    """A fresh venv at `folder/venv` with `wheel` (and `extras`) and its dependencies from PyPI, on
    this process's Spark line (its extra, `spark35` or `spark41`, as a user would pick it)."""
    venv = _venv(_outside_checkout(folder) / "venv")
    line = "spark" + jars.installed_line().replace(".", "")
    spec = f"lakeinlet[{','.join([*extras, line])}] @ {wheel.as_uri()}"
    _pip(venv, "install", spec)
    return venv


def installed_venv(folder: Path, dists: Dists | None = None) -> Path:
    """Build lakeinlet (unless `dists` are given) and install its wheel into a fresh venv under
    `folder`, outside the checkout; returns the venv. Built every call (no cache that could go
    stale); the install reuses pip's cache, where pyspark's locally built wheel is kept."""
    dists = dists or build(folder)
    return install(folder, dists.wheel)


def clean_env(venv: Path) -> dict[str, str]:
    """This process's environment as an activated `venv` sees it, without PYTHONPATH (which could
    reach the checkout) and without a parent venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    return env


def run(venv: Path, args: Sequence[str], cwd: Path, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    """Run a command of `venv` (`python`, `lakeinlet`, …) in `cwd` with `clean_env`."""
    exe = venv / "bin" / args[0]
    return subprocess.run([str(exe), *args[1:]], cwd=_outside_checkout(cwd), env=clean_env(venv),
                          input=stdin, capture_output=True, text=True, timeout=300)


def _pip(venv: Path, *args: str) -> None:
    subprocess.run([str(venv_python(venv)), "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
                   check=True)
