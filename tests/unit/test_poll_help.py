"""`lakeinlet-poll --help` and `lakeinlet-poll status --help`: each command's own flags, the
values of every choice flag, the commands there are, and "required" where a flag is required."""

from __future__ import annotations

import pytest

from lakeinlet.sources.job import main

pytestmark = pytest.mark.unit


def help_text(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0, f"expected {argv} to exit 0, found {done.value.code}"
    return " ".join(capsys.readouterr().out.split())


def test_poll_help_lists_the_values_of_every_choice_flag(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(["--help"], capsys)
    for flag in ("--log-format {text,json}", "--log-level {DEBUG,INFO,WARNING,ERROR}",
                 "--poison {dlq,redrive}"):
        assert flag in text, f"expected {flag!r} in lakeinlet-poll --help, found: {text[:600]}"


def test_poll_help_names_its_commands_and_required_flags(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(["--help"], capsys)
    assert ("usage: lakeinlet-poll --queue-url URL --changelog URI (--bucket B | --any-bucket) "
            "[options]") in text, text[:300]
    assert "lakeinlet-poll status --queue-url URL [options]" in text, text[:300]
    assert "status queue depth" in text, "expected the status command listed with what it does"
    for flag, env in (("--queue-url URL", "LAKEINLET__QUEUE__QUEUE_URL"),
                      ("--changelog URI", "LAKEINLET__CHANGELOG__URI")):
        entry = text.split(f"{flag} Required.", 1)[-1].split(" --", 1)[0]
        assert f"{flag} Required." in text and f"(env {env})" in entry, (
            f"expected {flag} marked required in --help, found: {entry[:200]}")


def test_status_help_shows_its_own_flags_only(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(["status", "--help"], capsys)
    assert "usage: lakeinlet-poll status" in text, text[:200]
    for flag in ("--queue-url URL", "--changelog URI", "--endpoint-url", "--log-format {text,json}"):
        assert flag in text, f"expected {flag!r} in status --help"
    for flag in ("--until-empty", "--batch-size", "--poison", "--receivers"):
        assert flag not in text, f"status --help shows the poll flag {flag}"
    assert "--queue-url URL Required. URL of the SQS queue" in text, "expected --queue-url required"


def test_missing_required_flags_say_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "--queue-url: required" in err and "--changelog: required" in err, err
    assert main(["status"]) == 2
    err = capsys.readouterr().err
    assert "--queue-url: required" in err, err
    assert main(["--queue-url", "sqs-queue", "--changelog", "x"]) == 2
    assert "--queue-url: expected https://" in capsys.readouterr().err, "a bad value is not 'missing'"
