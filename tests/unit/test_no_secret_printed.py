"""A recognisable fake secret in every credential and catalog URI or option, then every command's
failure paths (bad settings caught at validation, stores that do not answer) and `--help`: the
secret appears on no stdout, stderr or log line. In-process through each command's `main(argv)`;
the "stores" are closed loopback ports (connection refused at once). Spark's command line and
unredacted conf are checked in tests/spark/test_secrets_off_argv.py (they need a JVM)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.cli import main as lakeinlet_main
from lakeinlet.dev.emulator import free_port
from lakeinlet.incremental.job import main as load_main
from lakeinlet.sources.job import main as poll_main
from tests.conftest import received_rows

pytestmark = pytest.mark.unit

CANARY = f"LEAKCANARY-{uuid.uuid4()}"
DEAD = free_port()  # nothing listens there: every connection is refused at once
ENDPOINT = f"http://alice:{CANARY}@127.0.0.1:{DEAD}"
JDBC = f"jdbc:postgresql://alice:{CANARY}@127.0.0.1:{DEAD}/catalog"
REST = f"http://svc:{CANARY}@127.0.0.1:{DEAD}/v1"
HIVE = f"thrift://hms:{CANARY}@127.0.0.1:{DEAD}"
FAST = ["--max-attempts", "1"]


def _iceberg(tmp: Path, *more: str) -> list[str]:
    return ["--changelog", str(tmp / "changelog"), "--table", str(tmp / "t"), "--target-format", "iceberg",
            *more]


def _cases(tmp: Path) -> dict[str, tuple[Callable[[list[str]], int], list[str]]]:
    """Every command's failure paths, each with the secret where a user would put it."""
    jdbc = _iceberg(tmp, "--iceberg-catalog-uri", JDBC, "--iceberg-catalog-option", f"jdbc.password={CANARY}")
    rest = _iceberg(tmp, "--iceberg-catalog", "rest", "--iceberg-catalog-uri", REST,
                    "--iceberg-catalog-option", f"credential=client:{CANARY}",
                    "--iceberg-catalog-option", f"token={CANARY}")
    bad = _iceberg(tmp, "--iceberg-catalog", "hive", "--iceberg-catalog-uri", REST,
                   "--spark-conf", f"spark.hadoop.fs.s3a.secret.key {CANARY}",
                   "--iceberg-catalog-option", f"jdbc.password {CANARY}",
                   "--read-option", f"password {CANARY}")
    s3 = ["--changelog", "s3://lake/changelog", "--table", "s3://lake/t", "--endpoint-url", ENDPOINT, *FAST]
    queue = [*FAST, "--queue-url", f"{ENDPOINT}/123456789012/events", "--endpoint-url", ENDPOINT]
    return {
        "load run: settings refused at validation": (load_main, ["run", *bad]),
        "load run: the S3 endpoint does not answer": (load_main, ["run", *s3, "--spark-conf",
                                                                  f"spark.hadoop.fs.s3a.secret.key={CANARY}"]),
        "load run: unknown flag holding a URI": (load_main, ["run", f"--iceberg-catalog-urii={JDBC}"]),
        "load run: endpoint refused at validation": (load_main, ["run", *s3[:4], "--endpoint-url",
                                                                 f"ftp://alice:{CANARY}@h"]),
        "load status: jdbc catalog": (load_main, ["status", *jdbc]),
        "load status: S3 endpoint": (load_main, ["status", *s3]),
        "load checkpoint show: rest catalog": (load_main, ["checkpoint", "show", *rest]),
        "load checkpoint reset: rest catalog": (load_main, ["checkpoint", "reset", "--to-latest", "--dry-run",
                                                           *rest]),
        "poll: the queue does not answer": (poll_main, [*queue, "--changelog", str(tmp / "changelog"),
                                                       "--connect-timeout-seconds", "0.5"]),
        "poll: settings refused at validation": (poll_main, [*queue, "--changelog", str(tmp / "c"),
                                                            "--dlq-url", f"ftp://u:{CANARY}@h/q"]),
        "poll status: the queue does not answer": (poll_main, ["status", *queue]),
        "poll maintain: no changelog there": (poll_main, ["maintain", "--changelog", str(tmp / "none"),
                                                         "--no-loaders", "--endpoint-url", ENDPOINT]),
        "lakeinlet local env: no stack": (lakeinlet_main, ["local", "env", "--state-dir", str(tmp / "s")]),
        "lakeinlet jars: no such line": (lakeinlet_main, ["jars", "--spark", "9.9"]),
    }


def test_the_hive_metastores_errors_name_it_without_its_password(secrets_everywhere: Path) -> None:
    import pyarrow as pa

    from lakeinlet.errors import TransientError
    from lakeinlet.incremental.registry import CatalogRef
    from lakeinlet.incremental.registry.entry import TableEntry
    from lakeinlet.incremental.registry.hive import HiveRegistry
    from lakeinlet.incremental.targets.delta.catalog import DELTA_CATALOG

    entry = TableEntry(DELTA_CATALOG, "s3://lake/t", pa.schema([("id", pa.int64())]))
    with pytest.raises(TransientError) as err:
        HiveRegistry(HIVE).out_of_step(CatalogRef("hive", "db", "t"), entry)
    assert "hive metastore unreachable" in str(err.value) and CANARY not in str(err.value)


def test_a_uri_with_a_password_is_printed_redacted(secrets_everywhere: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # Hadoop still reads keys in a URI's userinfo (s3a://KEY:SECRET@bucket/): a command's own lines,
    # not only its errors, keep them out.
    table = f"file://alice:{CANARY}@localhost{secrets_everywhere}/t"
    changelog = str(secrets_everywhere / "changelog")
    DeltaChangelog(changelog).append(received_rows("b", 1), {"poll_batch": "b"})
    assert load_main(["status", "--changelog", changelog, "--table", table]) == 0
    out, err = capsys.readouterr()
    assert "target:    file://alice:***@localhost" in out and CANARY not in out + err


LOAD_COMMANDS = ("run", "backfill", "vacuum", "maintain", "cleanup", "status")
HELP = [(load_main, [c, "--help"]) for c in LOAD_COMMANDS] + [
    (load_main, ["checkpoint", "show", "--help"]), (load_main, ["checkpoint", "reset", "--help"]),
    (load_main, ["--help"]), (poll_main, ["--help"]), (poll_main, ["status", "--help"]),
    (poll_main, ["maintain", "--help"]), (lakeinlet_main, ["--help"]),
    (lakeinlet_main, ["local", "up", "--help"]), (lakeinlet_main, ["jars", "--help"])]


@pytest.fixture
def secrets_everywhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The canary in the AWS credentials and in the settings' environment variables and config file."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CANARY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", f"{CANARY}-session")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("LAKEINLET__HUDI__HUDI_OPTION", f"hoodie.password={CANARY}")
    monkeypatch.setenv("LAKEINLET_CONFIG", str(tmp_path / "lakeinlet.toml"))
    (tmp_path / "lakeinlet.toml").write_text(f'[spark]\nspark_conf = ["spark.x.token={CANARY}"]\n')
    return tmp_path


def _run(command: Callable[[list[str]], int], argv: list[str]) -> int | str | None:
    try:
        return command(argv)
    except SystemExit as exc:  # argparse: --help, usage errors
        return f"exit {exc.code}"


@pytest.mark.parametrize("case", list(_cases(Path("/x"))))
def test_no_failure_path_prints_a_secret(case: str, secrets_everywhere: Path,
                                         capsys: pytest.CaptureFixture[str],
                                         caplog: pytest.LogCaptureFixture) -> None:
    command, argv = _cases(secrets_everywhere)[case]
    caplog.set_level(logging.WARNING)  # what Python prints of any library's records by default
    code = _run(command, argv)
    out, err = capsys.readouterr()
    assert code not in (0, "exit 0"), (out, err)  # it did fail
    assert out + err, "a failure says something"
    assert CANARY not in out + err + caplog.text


def test_no_help_prints_a_secret(secrets_everywhere: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command, argv in HELP:
        assert _run(command, argv) == "exit 0", argv
        out, err = capsys.readouterr()
        assert "usage" in out.lower() and CANARY not in out + err, argv
