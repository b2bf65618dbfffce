"""`lakeinlet local env` exports what the README's `lakeinlet-poll` needs, the bucket allow-list
included: the poller refuses to start without one."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from lakeinlet.config import resolve
from lakeinlet.dev.cli import STATE_FILE, main
from lakeinlet.sources.job import build_parser
from lakeinlet.sources.settings import SourceConfig

pytestmark = pytest.mark.unit

STACK = {"endpoint": "http://127.0.0.1:5999", "region": "eu-west-1", "bucket": "lakeinlet-landing",
         "queue_url": "http://127.0.0.1:5999/123456789012/lakeinlet-events",
         "dlq_url": "http://127.0.0.1:5999/123456789012/lakeinlet-events-dlq"}


def test_local_env_sets_the_pollers_bucket_allow_list(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / STATE_FILE).write_text(json.dumps({"pid": 0, "stack": STACK}))
    assert main(["local", "env", "--state-dir", str(tmp_path)]) == 0
    exports = dict(shlex.split(line)[1].split("=", 1) for line in capsys.readouterr().out.splitlines()
                   if line.startswith("export "))
    assert exports.get("LAKEINLET__FILTER__BUCKETS") == "lakeinlet-landing", exports
    args = build_parser(SourceConfig, None, "").parse_args(
        ["--queue-url", exports["QUEUE_URL"], "--changelog", "./lake/changelog"])
    assert resolve(SourceConfig, args, exports).filter.buckets == ("lakeinlet-landing",)
