"""Fixtures of the terraform tier: the CLI and its provider mirror (or a skip saying what is
missing), and a moto server of the tier's own, since the IAM tests switch on its policy checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeinlet.dev.emulator import MotoServer
from tests.terraform.terraform_cli import find_mirror, find_terraform


@pytest.fixture(scope="session")
def terraform_bin() -> str:
    binary = find_terraform()
    if binary is None:
        pytest.skip("terraform not found on PATH (or $LAKEINLET_TERRAFORM): install Terraform >= 1.5 "
                    "to run the terraform tier")
    return binary


@pytest.fixture(scope="session")
def tf_mirror(terraform_bin: str) -> Path:
    mirror = find_mirror()
    if mirror is None:
        pytest.skip("no hashicorp/aws provider in a filesystem mirror (/opt/tf-plugins or "
                    "$LAKEINLET_TF_PLUGIN_DIR): terraform init would need the registry; only "
                    "`terraform fmt -check` runs on this machine")
    return mirror


@pytest.fixture(scope="session")
def tf_moto() -> Iterator[MotoServer]:
    """A moto server for this tier only: the IAM tests turn on its policy enforcement."""
    with MotoServer() as server:
        yield server
