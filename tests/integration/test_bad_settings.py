"""Wrong settings end in one line per problem and exit 2, before any work: a bucket that does not
exist, an endpoint nobody answers on, a local table that cannot be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet.dev.emulator import Stack
from lakeinlet.incremental.job import main as load
from lakeinlet.sources.job import main as poll

pytestmark = pytest.mark.integration


def test_the_loader_names_a_missing_bucket_and_exits_2(stack: Stack,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code = load(["run", "--drain", "--changelog", "s3://no-such-bucket-x/changelog", "--table",
                 f"s3://{stack.bucket}/orders", "--endpoint-url", stack.endpoint])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--changelog s3://no-such-bucket-x/changelog: expected an existing bucket, found no bucket " \
           "'no-such-bucket-x'" in err


def test_the_loader_names_a_closed_port_once(capsys: pytest.CaptureFixture[str]) -> None:
    code = load(["checkpoint", "show", "--changelog", "s3://a/changelog", "--table", "s3://a/orders",
                 "--endpoint-url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("expected S3 to answer at http://127.0.0.1:9") == 1


def test_the_loader_names_an_unwritable_local_table(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("x")
    code = load(["run", "--changelog", str(tmp_path / "changelog"), "--table",
                 str(tmp_path / "afile" / "t")])
    err = capsys.readouterr().err
    assert code == 2 and f"--table {tmp_path}/afile/t: expected a folder, found a file" in err


def test_the_poller_names_a_missing_changelog_bucket(stack: Stack,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = poll(["--queue-url", stack.queue_url, "--changelog", "s3://no-such-bucket-y/changelog",
                 "--bucket", stack.bucket, "--until-empty", "--endpoint-url", stack.endpoint])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--changelog s3://no-such-bucket-y/changelog: expected an existing bucket" in err
