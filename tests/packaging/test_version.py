"""`lakeinlet --version` prints the installed distribution's version (here: the editable install)."""

from __future__ import annotations

from importlib import metadata

import pytest

from lakeinlet.dev import cli

pytestmark = pytest.mark.unit


def test_version_flag_prints_the_metadata_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"lakeinlet {metadata.version('lakeinlet')}"

