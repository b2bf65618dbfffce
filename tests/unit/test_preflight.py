"""Start-up checks of table locations: a file in the way, a folder that cannot be written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from lakeinlet.aws import AwsSection
from lakeinlet.errors import ConfigError
from lakeinlet.preflight import check_locations

pytestmark = pytest.mark.unit


def test_a_new_table_under_a_writable_folder_passes(tmp_path: Path) -> None:
    check_locations({"--table": str(tmp_path / "lake" / "orders"), "--ledger": str(tmp_path)}, AwsSection())


def test_a_file_in_the_way_and_a_read_only_folder_are_each_named(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ConfigError) as caught:
        check_locations({"--table": str(tmp_path / "afile" / "orders"),
                         "--changelog": "/proc/lakeinlet/changelog"}, AwsSection())
    table, changelog = caught.value.problems
    assert table == f"--table {tmp_path}/afile/orders: expected a folder, found a file at {tmp_path}/afile"
    assert changelog.startswith("--changelog /proc/lakeinlet/changelog: expected a folder this user can "
                                "write, found /proc not writable")


class FakeS3:
    def __init__(self, answers: dict[str, Exception | None]) -> None:
        self.answers, self.asked = answers, []

    def head_bucket(self, Bucket: str) -> Any:
        self.asked.append(Bucket)
        if error := self.answers.get(Bucket):
            raise error
        return {}


def _client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "x"}}, "HeadBucket")


def test_a_missing_bucket_is_named_once_per_flag_and_asked_once() -> None:
    s3 = FakeS3({"gone": _client_error("404"), "locked": _client_error("403")})
    with pytest.raises(ConfigError) as caught:
        check_locations({"--table": "s3://gone/t", "--ledger": "s3a://gone/t_ledger",
                         "--changelog": "s3://locked/changelog"}, AwsSection(), lambda: s3)
    assert caught.value.problems == [
        "--table s3://gone/t: expected an existing bucket, found no bucket 'gone'",
        "--ledger s3a://gone/t_ledger: expected an existing bucket, found no bucket 'gone'"]
    assert s3.asked == ["gone", "locked"]  # access denied to the bucket is not a problem


def test_an_endpoint_that_does_not_answer_is_one_line() -> None:
    s3 = FakeS3({"b": EndpointConnectionError(endpoint_url="http://127.0.0.1:9/b")})
    with pytest.raises(ConfigError) as caught:
        check_locations({"--table": "s3://b/t", "--changelog": "s3://b/c"},
                        AwsSection(endpoint_url="http://127.0.0.1:9"), lambda: s3)
    assert caught.value.problems == ['expected S3 to answer at http://127.0.0.1:9, found: Could not '
                                     'connect to the endpoint URL: "http://127.0.0.1:9/b"']
