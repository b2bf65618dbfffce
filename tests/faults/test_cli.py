"""`python -m chaos`: serve a plan from a file, refuse a bad one, measure overhead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chaos.__main__ import main
from chaos.overhead import measure
from lakeinlet.dev.emulator import MotoServer
from tests.faults.conftest import aws_client


@pytest.mark.unit
def test_a_bad_plan_file_is_refused_with_exit_code_2(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rules": [{"operation": "PutObject", "fault": "explode"}]}))
    assert main(["serve", "--upstream", "http://127.0.0.1:1", "--plan", str(plan)]) == 2
    assert "fault: expected one of" in capsys.readouterr().err


@pytest.mark.integration
def test_serve_runs_a_plan_from_a_file_until_sigterm(tmp_path: Path, moto_server: MotoServer,
                                                     mitmdump: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rules": [{"operation": "ListBuckets", "fault": "throttle", "nth": [1]}]}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos", "serve", "--upstream", moto_server.endpoint,
         "--plan", str(plan), "--seed", "5", "--log", str(tmp_path / "f.jsonl")],
        stdout=subprocess.PIPE, text=True,
        env=os.environ | {"LAKEINLET_FAULTS_VENV": str(mitmdump.parents[1])})
    try:
        assert proc.stdout
        endpoint = proc.stdout.readline().split()[0].removeprefix("AWS_ENDPOINT_URL=")
        s3 = aws_client("s3", endpoint, attempts=2)
        assert s3.list_buckets()["ResponseMetadata"]["RetryAttempts"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    assert json.loads((tmp_path / "f.jsonl").read_text())["fault"] == "throttle"


@pytest.mark.integration
def test_overhead_measures_each_call_direct_and_proxied(proxy: object, moto_server: MotoServer) -> None:
    results = measure(moto_server.endpoint, proxy.endpoint, rounds=1, block=2)  # type: ignore[attr-defined]
    assert set(results) == {"HeadObject", "GetObject 64 KiB", "SendMessage"}
    assert all(direct > 0 and proxied > 0 for direct, proxied in results.values())
