"""The Terraform CLI, run offline on a throwaway copy of infra/terraform for the terraform tier.

Nothing lands in the repo: the module is copied to a tmp dir, the CLI config (provider mirror)
and the emulator's provider override (or the plan runs' test files) are generated there, and
TF_DATA_DIR points there too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "infra" / "terraform"
EXAMPLE = "examples/s3-to-sqs"
PROVIDER = "registry.terraform.io/hashicorp/aws"
DEFAULT_MIRROR = Path("/opt/tf-plugins")

CLI_CONFIG = """provider_installation {{
  filesystem_mirror {{
    path    = "{mirror}"
    include = ["registry.terraform.io/hashicorp/*"]
  }}
  direct {{
    exclude = ["registry.terraform.io/hashicorp/*"]
  }}
}}
"""

# Merged into the example's provider block (Terraform override file): moto, static test keys.
EMULATOR_OVERRIDE = """provider "aws" {{
  region                      = "us-east-1"
  access_key                  = "testing"
  secret_key                  = "testing"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
  s3_use_path_style           = true

  endpoints {{
    s3  = "{endpoint}"
    sqs = "{endpoint}"
    sns = "{endpoint}"
    iam = "{endpoint}"
    sts = "{endpoint}"
  }}
}}
"""


def find_terraform() -> str | None:
    """The terraform binary: $LAKEINLET_TERRAFORM, else `terraform` on PATH."""
    return os.environ.get("LAKEINLET_TERRAFORM") or shutil.which("terraform")


def find_mirror() -> Path | None:
    """A filesystem mirror holding hashicorp/aws: $LAKEINLET_TF_PLUGIN_DIR, else /opt/tf-plugins."""
    path = Path(os.environ.get("LAKEINLET_TF_PLUGIN_DIR") or DEFAULT_MIRROR)
    return path if (path / PROVIDER).is_dir() else None


class TerraformError(AssertionError):
    """A terraform command failed; the message carries the tail of its output."""


@dataclass(frozen=True)
class Terraform:
    """One root module in a tmp copy, with its own data dir and CLI config."""

    binary: str
    root: Path
    env: dict[str, str]

    @classmethod
    def prepare(cls, binary: str, mirror: Path, tmp: Path, endpoint: str | None,
                root: str = EXAMPLE) -> Terraform:
        """Copy the module into `tmp`, write the CLI config and the emulator override (none
        without an endpoint: `plan_runs` needs no AWS at all), init."""
        shutil.copytree(MODULE, tmp / "module", ignore=shutil.ignore_patterns(
            ".terraform*", "*.tfstate*", "*_override.tf"))
        (tmp / "cli.tfrc").write_text(CLI_CONFIG.format(mirror=mirror))
        workdir = tmp / "module" / root
        if endpoint is not None:
            (workdir / "emulator_override.tf").write_text(EMULATOR_OVERRIDE.format(endpoint=endpoint))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TF_", "AWS_"))} | {
            "TF_CLI_CONFIG_FILE": str(tmp / "cli.tfrc"), "TF_DATA_DIR": str(tmp / "tf-data"),
            "TF_IN_AUTOMATION": "1", "TF_INPUT": "0", "CHECKPOINT_DISABLE": "1"}
        tf = cls(binary, workdir, env)
        tf.run("init")
        return tf

    def run(self, *args: str, timeout: float = 300) -> str:
        """Run `terraform <args>` in the root; raises TerraformError with its output on failure."""
        try:
            proc = subprocess.run([self.binary, *args, "-no-color"], cwd=self.root, env=self.env,
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            raise TerraformError(f"terraform {' '.join(args)} still running after {timeout}s:\n"
                                 f"{out[-3000:]}") from None
        if proc.returncode != 0:
            raise TerraformError(f"terraform {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return proc.stdout

    def apply(self, variables: dict[str, str]) -> None:
        self.run("apply", "-auto-approve", *_var_args(variables), timeout=420)

    def destroy(self, variables: dict[str, str]) -> None:
        # The state was written by this session's apply: refreshing it first only costs time.
        self.run("destroy", "-auto-approve", "-refresh=false", *_var_args(variables), timeout=180)

    def outputs(self) -> dict[str, Any]:
        return {k: v["value"] for k, v in json.loads(self.run("output", "-json")).items()}

    def plan_json(self, variables: dict[str, str]) -> dict[str, Any]:
        """`plan` then `show -json` of the plan: planned values and the configuration."""
        self.run("plan", "-out=tfplan", *_var_args(variables))
        return dict(json.loads(self.run("show", "-json", "tfplan")))

    def plan_runs(self, runs: dict[str, dict[str, Any]], timeout: float = 600) -> dict[str, PlanRun]:
        """Plan the root once per variable set, all in one `terraform test` process (each run
        block costs a plan, not a provider start-up and a `show`), offline: no AWS call.

        Each set is a test file of its own, so that a run refused by a validation or a
        precondition does not skip the others. Returns each run's planned outputs and
        resources, or its errors.
        """
        tests = self.root / "tests"
        tests.mkdir(exist_ok=True)
        for name, variables in runs.items():
            (tests / f"{name}.tftest.hcl").write_text(_test_file(name, variables))
        log = Path(self.env["TF_DATA_DIR"]).parent / "plan-runs.jsonl"
        with log.open("w") as out:
            proc = subprocess.run([self.binary, "test", "-json", "-verbose", "-no-color"],
                                  cwd=self.root, env=self.env, stdout=out, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout, check=False)
        found = _read_runs(log)
        missing = sorted(set(runs) - set(found))
        if missing:
            raise TerraformError(f"terraform test exited {proc.returncode} without runs {missing}:\n"
                                 f"{proc.stderr[-4000:]}")
        return found


@dataclass(frozen=True)
class PlanRun:
    """One planned variable set: output values and resources' planned attributes (None where
    only the apply knows them), or the errors that refused it."""

    outputs: dict[str, Any]
    resources: dict[str, dict[str, Any]]
    errors: tuple[str, ...]
    unknown: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per resource, the attributes only the apply knows (`after_unknown`: True, or a nested map)."""

    def policy(self, output: str) -> dict[str, Any]:
        """An output holding a policy document, parsed."""
        return dict(json.loads(self.outputs[output]))


# The provider needs no credentials and makes no call for this module's plans: the caller's
# account is the one data source that would ask AWS (region and partition come from here).
TEST_PROVIDER = """provider "aws" {
  region                      = "us-east-1"
  access_key                  = "plan-only"
  secret_key                  = "plan-only"
  skip_credentials_validation = true
  skip_requesting_account_id  = true
  skip_metadata_api_check     = true
  skip_region_validation      = true
}

override_data {
  target = data.aws_caller_identity.current
  values = { account_id = "123456789012" }
}
"""


def _test_file(name: str, variables: dict[str, Any]) -> str:
    lines = [f"    {key} = {_hcl(value)}" for key, value in variables.items()]
    return TEST_PROVIDER + f'\nrun "{name}" {{\n  command = plan\n\n  variables {{\n' + \
        "\n".join(lines) + "\n  }\n}\n"


def _hcl(value: Any) -> str:
    """A JSON literal is an HCL literal, but for template sequences in strings."""
    text = json.dumps(value)
    if "${" in text or "%{" in text:
        raise ValueError(f"template sequence in a test variable: {text}")
    return text


def _read_runs(log: Path) -> dict[str, PlanRun]:
    """Runs from `terraform test -json -verbose`: each passed run's plan, each run's errors."""
    plans: dict[str, dict[str, Any]] = {}
    errors: dict[str, list[str]] = {}
    with log.open() as lines:
        for line in lines:
            message = json.loads(line)
            run = message.get("@testrun")
            if run and message["type"] == "test_plan":
                plans[run] = message["test_plan"]
            elif run and message["type"] == "diagnostic" and message["@level"] == "error":
                diag = message["diagnostic"]
                errors.setdefault(run, []).append(f"{diag['summary']}: {diag.get('detail', '')}")
    return {run: _plan_run(plans.get(run), errors.get(run, [])) for run in plans.keys() | errors.keys()}


def _plan_run(plan: dict[str, Any] | None, errors: list[str]) -> PlanRun:
    if plan is None:
        return PlanRun({}, {}, tuple(errors))
    outputs = {name: change.get("after") for name, change in plan.get("output_changes", {}).items()}
    managed = [r for r in plan.get("resource_changes", []) if r["mode"] == "managed"]
    resources = {r["address"]: r["change"].get("after") or {} for r in managed}
    unknown = {r["address"]: r["change"].get("after_unknown") or {} for r in managed}
    return PlanRun(outputs, resources, tuple(errors), unknown)


def _var_args(variables: dict[str, str]) -> list[str]:
    return [f"-var={k}={v}" for k, v in variables.items()]
