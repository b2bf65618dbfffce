"""Config resolution order, type conversion, validation and generated help."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.config import add_arguments, reference_markdown, resolve, setting
from lakeinlet.errors import ConfigError
from lakeinlet.logs import LogSection

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class DemoSection:
    """Demo section."""

    batch_size: int = setting(100, "Events per commit.")
    prefixes: tuple[str, ...] = setting((), "Key prefixes to keep.", flag="--prefix")
    until_empty: bool = setting(False, "Stop when the queue is empty.")
    name: str | None = setting(None, "A name.")

    def validate(self) -> list[str]:
        return [] if self.batch_size > 0 else [f"--batch-size: expected > 0, found {self.batch_size}"]


@dataclass(frozen=True)
class DemoConfig:
    demo: DemoSection
    aws: AwsSection
    log: LogSection


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser, DemoConfig)
    return parser.parse_args(argv)


def test_defaults_when_nothing_is_given() -> None:
    cfg = resolve(DemoConfig, parse([]), environ={})
    assert cfg.demo == DemoSection()
    assert cfg.aws.endpoint_url is None


def test_flag_beats_env_beats_toml_beats_default(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[demo]\nbatch_size = 7\nname = "from-toml"\n[aws]\nregion = "eu-west-1"\n')
    env = {"LAKEINLET__DEMO__BATCH_SIZE": "8", "LAKEINLET__DEMO__NAME": "from-env"}
    cfg = resolve(DemoConfig, parse(["--batch-size", "9"]), environ=env, toml_path=str(toml))
    assert (cfg.demo.batch_size, cfg.demo.name, cfg.aws.region) == (9, "from-env", "eu-west-1")


def test_extra_env_name_is_honoured() -> None:
    cfg = resolve(DemoConfig, parse([]), environ={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert cfg.aws.endpoint_url == "http://127.0.0.1:9"


def test_tuple_and_bool_settings() -> None:
    cfg = resolve(DemoConfig, parse(["--prefix", "a/,b/", "--prefix", "c/", "--until-empty"]), environ={})
    assert cfg.demo.prefixes == ("a/", "b/", "c/")
    assert cfg.demo.until_empty is True
    cfg = resolve(DemoConfig, parse([]), environ={"LAKEINLET__DEMO__UNTIL_EMPTY": "yes"})
    assert cfg.demo.until_empty is True


def test_every_problem_is_reported_together() -> None:
    args = parse(["--batch-size", "0", "--log-format", "xml", "--endpoint-url", "ftp://x"])
    with pytest.raises(ConfigError) as err:
        resolve(DemoConfig, args, environ={"LAKEINLET__AWS__MAX_ATTEMPTS": "many"})
    text = "\n".join(err.value.problems)
    assert len(err.value.problems) == 4, text
    for needle in ("--batch-size", "--log-format", "--endpoint-url", "LAKEINLET__AWS__MAX_ATTEMPTS"):
        assert needle in text


def test_missing_or_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        resolve(DemoConfig, parse([]), environ={}, toml_path=str(tmp_path / "nope.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text("[demo\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve(DemoConfig, parse([]), environ={}, toml_path=str(bad))


def test_help_and_reference_come_from_the_field_docs() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser, DemoConfig)
    text = parser.format_help()
    assert "Events per commit." in text and "LAKEINLET__DEMO__BATCH_SIZE" in text
    ref = reference_markdown(DemoConfig, "Demo")
    assert "| `--batch-size` |" in ref and "Events per commit." in ref


def test_unknown_sections_and_keys_in_the_config_file_are_refused_with_the_nearest_name(
        tmp_path: Path) -> None:
    """Issue 36: a typo in --config-file was silently ignored (the setting kept its default)."""
    toml = tmp_path / "c.toml"
    toml.write_text('top = 1\n[demo]\nbatch_sise = 7\nmax-files = 3\nregion = "x"\nuntil-empty = true\n'
                    '[awz]\nregion = "eu-west-1"\n[spark]\nmaster = "local"\n')
    with pytest.raises(ConfigError) as info:
        resolve(DemoConfig, parse([]), environ={}, toml_path=str(toml))
    assert info.value.problems == [
        f"config file {toml}: top is outside any [section]: settings are `[section] key = value`",
        f"config file {toml}: unknown key batch_sise in [demo] (did you mean batch_size?)",
        f"config file {toml}: unknown key max-files in [demo]",
        f"config file {toml}: unknown key region in [demo] (did you mean [aws] region?)",
        f"config file {toml}: unknown key until-empty in [demo] (did you mean until_empty?)",
        f"config file {toml}: unknown section [awz] (did you mean [aws]?)",
        f"config file {toml}: unknown section [spark] (sections: aws, demo, log)"]


@dataclass(frozen=True)
class OtherCommand:
    aws: AwsSection
    other: DemoSection


def test_a_section_another_command_of_the_job_reads_is_not_unknown(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[demo]\nbatch_size = 7\n[other]\nname = "n"\n')
    cfg = resolve(DemoConfig, parse([]), environ={}, toml_path=str(toml), also=[OtherCommand])
    assert cfg.demo.batch_size == 7
    from lakeinlet.incremental.job import main as load
    from lakeinlet.sources.job import main as poll

    bad = tmp_path / "bad.toml"
    bad.write_text('[aws]\nregoin = "x"\n[plan]\nmax_files = 5\n[queue]\nurl = "q"\n')
    for main, other in ((load, "[queue]"), (poll, "[plan]")):  # both jobs refuse a typo
        assert main(["status", "--config-file", str(bad)]) == 2
        err = capsys.readouterr().err
        assert "unknown key regoin in [aws] (did you mean region?)" in err
        assert f"unknown section {other}" in err
