"""`backfill` with several --prefix flags counts every prefix's objects (not the last one's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.incremental.job import main
from tests.conftest import unique

pytestmark = pytest.mark.integration


def test_backfill_counts_all_prefixes(aws: AwsSection, tmp_path: Path, capsys: Any) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    for key in ("a/1.json", "a/2.json", "b/1.json", "c/ignored.json"):
        s3.put_object(Bucket=bucket, Key=key, Body=b'{"x": 1}\n')
    flags = ["--bucket", bucket, "--prefix", "a/", "--prefix", "b/", "--changelog", str(tmp_path / "cl"),
             "--table", str(tmp_path / "t"), "--endpoint-url", aws.endpoint_url or ""]
    assert main(["backfill", "--dry-run", *flags]) == 0
    assert "dry run: nothing changed (3 synthetic events would be appended)" in capsys.readouterr().out
    assert main(["backfill", *flags]) == 0
    assert "appended 3 synthetic events to the changelog" in capsys.readouterr().out
    rows = DeltaChangelog(str(tmp_path / "cl")).read_versions(after=-1).column("key").to_pylist()
    assert sorted(rows) == ["a/1.json", "a/2.json", "b/1.json"]
