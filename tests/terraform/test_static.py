"""Static checks of infra/terraform: formatting, validation, checkov (no AWS calls)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lakeinlet.dev.emulator import MotoServer
from tests.terraform.terraform_cli import EXAMPLE, MODULE, REPO, Terraform

pytestmark = pytest.mark.terraform


def test_fmt_check(terraform_bin: str) -> None:
    proc = subprocess.run([terraform_bin, "fmt", "-check", "-recursive", "-diff", "-no-color", str(MODULE)],
                          capture_output=True, text=True, check=False,
                          env=os.environ | {"CHECKPOINT_DISABLE": "1"})
    assert proc.returncode == 0, f"run `terraform fmt -recursive infra/terraform`:\n{proc.stdout}"


@pytest.mark.parametrize("root", [".", EXAMPLE])
def test_init_and_validate_offline(terraform_bin: str, tf_mirror: Path, tf_moto: MotoServer,
                                   tmp_path: Path, root: str) -> None:
    tf = Terraform.prepare(terraform_bin, tf_mirror, tmp_path, tf_moto.endpoint, root=root)
    assert "Success! The configuration is valid." in tf.run("validate")
    assert not list(MODULE.rglob(".terraform")), "terraform wrote into the repo"


def _checkov() -> str | None:
    found = os.environ.get("LAKEINLET_CHECKOV") or shutil.which("checkov")
    tools = REPO / ".venv-tools" / "bin" / "checkov"
    return found or (str(tools) if tools.exists() else None)


def test_checkov_has_no_failed_checks() -> None:
    checkov = _checkov()
    if checkov is None:
        pytest.skip("checkov not installed (PATH, $LAKEINLET_CHECKOV or .venv-tools/bin/checkov; "
                    "`make checkov` installs it in .venv-tools)")
    proc = subprocess.run([checkov, "-d", "infra", "--framework", "terraform", "--skip-download",
                           "-o", "json"],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=300)
    report = json.loads(proc.stdout)
    results = report[0]["results"] if isinstance(report, list) else report["results"]
    summary = report[0]["summary"] if isinstance(report, list) else report["summary"]
    print(f"checkov: passed={summary['passed']} failed={summary['failed']} "
          f"skipped={summary['skipped']}")
    failed = [f"{c['check_id']} {c['resource']} {c['file_path']}" for c in results["failed_checks"]]
    assert not failed, "checkov failed checks:\n" + "\n".join(failed)
    assert summary["passed"] > 0 and summary["parsing_errors"] == 0, summary
    unjustified = [c["check_id"] for c in results["skipped_checks"]
                   if len(c.get("check_result", {}).get("suppress_comment", "")) < 20]
    assert not unjustified, f"skips without a reason next to the resource: {unjustified}"
