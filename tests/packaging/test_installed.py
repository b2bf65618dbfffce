"""The installed wheel, run from a folder outside the checkout without PYTHONPATH: every product
module imports and the console scripts answer; no top-level `incremental` or `sources` package."""

from __future__ import annotations

import json
import re
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from lakeinlet.versioning import source_version
from tests.installed import ROOT, Dists, run
from tests.packaging import product

pytestmark = pytest.mark.packaging

IMPORT_ALL = """
import importlib, json, sys
from pathlib import Path
out = {}
for name in sys.argv[1:]:
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}", "missing": getattr(exc, "name", None)}
    else:
        if not Path(module.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()):
            out[name] = {"error": f"imported from {module.__file__}, outside the venv", "missing": None}
print(json.dumps(out))
"""


def metadata(dists: Dists) -> dict[str, list[str]]:
    with zipfile.ZipFile(dists.wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        msg = Parser().parsestr(whl.read(name).decode())
    return {"Version": msg.get_all("Version") or [], "Requires-Dist": msg.get_all("Requires-Dist") or []}


def extra_imports(dists: Dists, extra: str) -> set[str]:
    """Import names (approximated by distribution names) of what `extra` adds."""
    reqs = [r for r in metadata(dists)["Requires-Dist"] if f'extra == "{extra}"' in r]
    return {re.match(r"[A-Za-z0-9._-]+", r).group().lower().replace("-", "_")  # type: ignore[union-attr]
            for r in reqs}


def test_every_product_module_imports(wheel_venv: Path, built_dists: Dists, tmp_path: Path) -> None:
    modules = sorted(product.sources())
    done = run(wheel_venv, ["python", "-c", IMPORT_ALL, *modules], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    failed: dict[str, dict[str, str | None]] = json.loads(done.stdout)
    print(f"{len(modules) - len(failed)} of {len(modules)} product modules import from the wheel")
    assert {m: f["error"] for m, f in failed.items() if not needs_extra(built_dists, m, f["missing"])} == {}


def needs_extra(dists: Dists, module: str, missing: str | None) -> bool:
    """`module` failed only for a dependency of the extra it is documented to need."""
    extra = product.NEEDS_EXTRA.get(module)
    return extra is not None and (missing or "").split(".")[0] in extra_imports(dists, extra)


@pytest.mark.parametrize("command", [
    ["lakeinlet-poll", "--help"],
    ["lakeinlet-load", "--help"],
    ["lakeinlet-load", "run", "--help"],
    ["lakeinlet", "--help"],
    ["lakeinlet", "jars", "--packages"],
])
def test_console_scripts_answer(wheel_venv: Path, tmp_path: Path, command: list[str]) -> None:
    done = run(wheel_venv, command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()


def test_version_is_the_distributions(wheel_venv: Path, built_dists: Dists, tmp_path: Path) -> None:
    done = run(wheel_venv, ["lakeinlet", "--version"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    version = metadata(built_dists)["Version"]
    assert version == [source_version(ROOT)]  # from git (`lakeinlet/versioning.py`), not a constant
    assert done.stdout.strip() == f"lakeinlet {version[0]}"


@pytest.mark.parametrize("name", ["incremental", "sources"])
def test_no_top_level_checkout_folder_package(wheel_venv: Path, tmp_path: Path, name: str) -> None:
    done = run(wheel_venv, ["python", "-c", f"import {name}"], cwd=tmp_path)
    assert done.returncode != 0
    assert f"No module named '{name}'" in done.stderr


def test_local_stack_without_moto_says_which_extra(wheel_venv: Path, tmp_path: Path) -> None:
    """moto comes with the `local` extra, not with lakeinlet: `local up` says so and exits 2."""
    done = run(wheel_venv, ["lakeinlet", "local", "up", "--state-dir", str(tmp_path / "state")], cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "its local extra" in done.stderr and "-py3-none-any.whl[local]" in done.stderr
    assert not (tmp_path / "state" / "local.json").exists()
