"""The Terraform CLI, run offline on a throwaway copy of infra/terraform for the terraform tier.

Nothing lands in the repo: the module is copied to a tmp dir, the CLI config (provider mirror)
and the emulator's provider override are generated there, and TF_DATA_DIR points there too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
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
    def prepare(cls, binary: str, mirror: Path, tmp: Path, endpoint: str,
                root: str = EXAMPLE) -> Terraform:
        """Copy the module into `tmp`, write the CLI config and the emulator override, init."""
        shutil.copytree(MODULE, tmp / "module", ignore=shutil.ignore_patterns(
            ".terraform*", "*.tfstate*", "*_override.tf"))
        (tmp / "cli.tfrc").write_text(CLI_CONFIG.format(mirror=mirror))
        workdir = tmp / "module" / root
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


def _var_args(variables: dict[str, str]) -> list[str]:
    return [f"-var={k}={v}" for k, v in variables.items()]
