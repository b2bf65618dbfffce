"""The dependency floors in pyproject.toml allow no release that lacks what lakeinlet relies on."""

from __future__ import annotations

import tomllib
from pathlib import Path

import botocore.session
import pytest
from packaging.requirements import Requirement
from packaging.version import Version

pytestmark = pytest.mark.unit

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
IF_MATCH_DELETE = Version("1.35.67")
"""botocore's changelog, 1.35.67: "s3: Add support for conditional deletes for the S3 DeleteObject
and DeleteObjects APIs" (1.35.66's DeleteObjectRequest has no IfMatch); boto3 1.35.67 requires it."""


def _floor(name: str) -> Version:
    deps = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    spec = next(Requirement(d).specifier for d in deps if Requirement(d).name == name)
    return min(Version(s.version) for s in spec if s.operator == ">=")


def test_the_boto3_floor_can_send_if_match_on_delete() -> None:
    assert _floor("boto3") >= IF_MATCH_DELETE
    model = botocore.session.get_session().get_service_model("s3")
    assert "IfMatch" in model.operation_model("DeleteObject").input_shape.members
