"""The sdist and the wheel hold every product module (mapped to its package), `py.typed`, and
neither the test harness nor a top-level `sources`/`incremental` package."""

from __future__ import annotations

import tarfile
import zipfile

import pytest

from tests.installed import Dists
from tests.packaging import product

pytestmark = pytest.mark.packaging


def wheel_names(dists: Dists) -> set[str]:
    with zipfile.ZipFile(dists.wheel) as whl:
        return set(whl.namelist())


def sdist_names(dists: Dists) -> set[str]:
    """Members relative to the sdist's top folder (`lakeinlet-VERSION/`)."""
    with tarfile.open(dists.sdist) as tar:
        return {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}


def test_wheel_holds_every_product_module(built_dists: Dists) -> None:
    names = wheel_names(built_dists)
    wanted = {product.wheel_path(m, src) for m, src in product.sources().items()}
    assert sorted(wanted - names) == []
    assert "lakeinlet/py.typed" in names


def test_wheel_has_only_the_lakeinlet_package(built_dists: Dists) -> None:
    names = wheel_names(built_dists)
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"lakeinlet"}
    shipped = {n for n in names if n.endswith(".py")}
    assert sorted(n for n in shipped if n.startswith(tuple(h.replace(".", "/") + "/"
                                                              for h in product.HARNESS))) == []


def test_sdist_holds_every_product_module(built_dists: Dists) -> None:
    names = sdist_names(built_dists)
    assert sorted(str(src) for src in product.sources().values() if str(src) not in names) == []
    assert {"pyproject.toml", "README.md", "lakeinlet/py.typed"} <= names
    harness = tuple(h.replace(".", "/") + "/" for h in product.HARNESS)
    assert sorted(n for n in names if n.startswith(harness) and n.endswith(".py")) == []


def test_no_product_module_imports_the_harness() -> None:
    """The harness is left out of the dists only because nothing that ships imports it."""
    assert product.harness_importers() == {}
