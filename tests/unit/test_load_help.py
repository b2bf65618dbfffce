"""`lakeinlet-load … --help` lists every flag its command accepts, the format sections included."""

from __future__ import annotations

import pytest

from lakeinlet.incremental.job import main

pytestmark = pytest.mark.unit


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0, f"expected {argv} --help to exit 0, found {done.value.code}"
    return capsys.readouterr().out


def test_run_help_lists_the_hudi_and_iceberg_flags(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(["run"], capsys)
    for flag in ("--hudi-record-key", "--lease-seconds", "--iceberg-catalog", "--iceberg-catalog-uri"):
        assert f"  {flag} " in text, flag
    assert text.index("\ntables:") < text.index("\nhudi:") < text.index("\nspark:")  # common ones first


def test_commands_that_open_the_table_list_the_catalog_flags(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["checkpoint", "show"], ["checkpoint", "reset"], ["status"], ["vacuum"]):
        assert "  --iceberg-catalog-uri " in help_text(command, capsys), command
