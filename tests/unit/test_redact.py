"""One `redact()` for every message: URI passwords, secret-named settings and values, AWS secret
keys; errors, log lines, argparse's usage errors and the Iceberg catalog's description use it."""

from __future__ import annotations

import argparse
import json
import logging

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.config import add_arguments, redact_errors
from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.settings import ReadSection
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog, IcebergSection
from lakeinlet.logs import JsonFormatter, LogSection, TextFormatter
from lakeinlet.redact import MASK, carries_secret, redact, redact_setting
from lakeinlet.spark import SparkSection

pytestmark = pytest.mark.unit

LEAK = "LEAKCANARY-0f3a"
AWS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(("text", "kept"), [
    (f"jdbc:postgresql://alice:{LEAK}@db:5432/cat", "jdbc:postgresql://alice:***@db:5432/cat"),
    (f"found 'thrift://hms:{LEAK}@ss@meta:9083'", "found 'thrift://hms:***@meta:9083'"),
    (f"https://{LEAK}@rest.example/v1", "https://***@rest.example/v1"),
    (f"spark.hadoop.fs.s3a.secret.key={LEAK}", "spark.hadoop.fs.s3a.secret.key=***"),
    (f"{{'jdbc.password': '{LEAK}', 'jdbc.user': 'al'}}", "{'jdbc.password': '***', 'jdbc.user': 'al'}"),
    (f'{{"credential": "client:{LEAK}"}}', '{"credential": "***"}'),
    (f"http://rest:8181/v1?token={LEAK}&warehouse=w", "http://rest:8181/v1?token=***&warehouse=w"),
    (f"jdbc:sqlserver://db;user=al;password={LEAK};db=c", "jdbc:sqlserver://db;user=al;password=***;db=c"),
    (f"s3.secret-access-key={LEAK}", "s3.secret-access-key=***"),
    (f"Authorization: Bearer {LEAK}", "Authorization: Bearer ***"),
    (f"the key {AWS_KEY} leaked", "the key *** leaked"),
])
def test_redact_masks_the_secret_and_keeps_the_rest(text: str, kept: str) -> None:
    assert redact(text) == kept


@pytest.mark.parametrize("text", [
    "s3a://bucket/json/a@b/part-0.json",  # an @ in a key is no userinfo
    "http://127.0.0.1:5000",
    "--max-tokens: expected int, found 'x'",  # prose about a token is no pair
    "0123456789abcdef0123456789abcdef01234567",  # a SHA-1 is no AWS key
    "s3a://lake/aaaaaaaaaa/Bbbbbbbbb1/ccccccccc/ddd",  # nor a path of 40 characters
    "spark.redaction.regex=(?i)secret|password",
])
def test_redact_leaves_text_without_secrets_alone(text: str) -> None:
    assert redact(text) == text


def test_redact_masks_the_environments_aws_secret_wherever_it_appears(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", LEAK)
    assert redact(f"signature computed with {LEAK}!") == f"signature computed with {MASK}!"


def test_a_setting_echoed_malformed_keeps_its_key_only() -> None:
    assert redact_setting(f"spark.hadoop.fs.s3a.secret.key {LEAK}") == "spark.hadoop.fs.s3a.secret.key=***"
    assert redact_setting(f"jdbc.password:{LEAK}") == "jdbc.password=***"
    assert redact_setting("spark.sql.x") == "spark.sql.x"
    assert carries_secret("spark.sql.catalog.c.uri", f"jdbc:postgresql://a:{LEAK}@h/d")
    assert carries_secret("spark.sql.catalog.c.credential", "x")
    assert not carries_secret("spark.sql.catalog.c.uri", "jdbc:postgresql://h/d")


def test_errors_are_redacted_when_made() -> None:
    uri = f"jdbc:postgresql://alice:{LEAK}@db/cat"
    for err in (ConfigError([f"--iceberg-catalog-uri {uri}: bad"]), TerminalError(f"catalog {uri}: down"),
                TransientError(f"hive metastore thrift://u:{LEAK}@h:9083 unreachable")):
        assert LEAK not in str(err)
        assert "alice" in str(err) or "thrift://u:***@h" in str(err)
    assert LEAK not in ConfigError([f"x {uri}"]).problems[0]


def test_bad_key_value_items_are_echoed_without_their_secret() -> None:
    item = f"spark.hadoop.fs.s3a.secret.key {LEAK}"
    problems = [*SparkSection(spark_conf=(item,)).validate(),
                *IcebergSection(iceberg_catalog_option=(f"jdbc.password {LEAK}",)).validate(),
                *ReadSection(read_option=(f"password {LEAK}",)).validate(),
                *HudiSection(hudi_option=(f"hoodie.ssl.password {LEAK}",)).validate()]
    assert len(problems) == 4
    assert not [p for p in problems if LEAK in p]


def test_the_iceberg_catalog_describes_itself_without_its_password() -> None:
    section = IcebergSection(iceberg_catalog_uri=f"jdbc:postgresql://alice:{LEAK}@db:5432/cat")
    said = IcebergCatalog(section, "s3a://lake/t", AwsSection()).describe()
    assert said == "jdbc jdbc:postgresql://alice:***@db:5432/cat"


@pytest.mark.parametrize("formatter", [TextFormatter(), JsonFormatter()])
def test_log_lines_are_redacted(formatter: logging.Formatter) -> None:
    record = logging.LogRecord("lakeinlet.loader", logging.ERROR, __file__, 1, "failed %s", (
        f"catalog jdbc:postgresql://alice:{LEAK}@db/cat",), None)
    try:
        raise RuntimeError(f"password={LEAK}")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    line = formatter.format(record)
    assert LEAK not in line and "alice" in line
    if isinstance(formatter, JsonFormatter):
        json.loads(line)  # still one JSON document


def test_argparse_usage_errors_are_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Config:
        log: LogSection

    parser = argparse.ArgumentParser(prog="demo")
    add_arguments(parser, Config)
    with pytest.raises(SystemExit):
        parser.parse_args([f"--catalog-urii=jdbc:postgresql://alice:{LEAK}@db/cat"])
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err and LEAK not in err

    bare = argparse.ArgumentParser(prog="bare")
    bare.add_argument("--mode", choices=["a"])
    redact_errors(bare)
    with pytest.raises(SystemExit):
        bare.parse_args(["--mode", f"password={LEAK}"])
    assert LEAK not in capsys.readouterr().err
