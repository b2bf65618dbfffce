"""Plans of the example root against the moto server: defaults, the paths the apply test cannot
take on moto (the DLQ's redrive allow policy, SNS fan-out), and the guards on bad settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.dev.emulator import NOTIFIED_EVENTS, MotoServer
from lakeinlet.queue_settings import QueueSettings
from tests.terraform.terraform_cli import Terraform, TerraformError

pytestmark = pytest.mark.terraform

BUCKET = {"bucket_name": "tf-plan-landing"}
# What lakeinlet.dev.emulator.set_notifications subscribes the local stack's queue to.
LOCAL_STACK_EVENTS = NOTIFIED_EVENTS


@pytest.fixture(scope="module")
def tf(terraform_bin: str, tf_mirror: Path, tf_moto: MotoServer,
       tmp_path_factory: pytest.TempPathFactory) -> Terraform:
    return Terraform.prepare(terraform_bin, tf_mirror, tmp_path_factory.mktemp("tf-plan"),
                             tf_moto.endpoint)


@pytest.fixture(scope="module")
def default_plan(tf: Terraform) -> dict[str, Any]:
    return tf.plan_json(BUCKET)


def _planned(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Planned resources by address, the module's included."""
    out: dict[str, dict[str, Any]] = {}
    stack = [plan["planned_values"]["root_module"]]
    while stack:
        module = stack.pop()
        out |= {r["address"]: r.get("values", {}) for r in module.get("resources", [])
                if r["mode"] == "managed"}
        stack.extend(module.get("child_modules", []))
    return out


def test_variable_defaults_are_the_local_stack_settings(default_plan: dict[str, Any]) -> None:
    """One set of queue settings: QueueSettings (`lakeinlet local up`) and variables.tf."""
    module = default_plan["configuration"]["root_module"]["module_calls"]["lakeinlet"]["module"]
    variables = module["variables"]
    expected = QueueSettings().as_dict()
    assert {name: variables[name].get("default") for name in expected} == expected
    assert variables["event_types"]["default"] == LOCAL_STACK_EVENTS


def test_default_plan_restricts_the_dlq_to_the_event_queue(default_plan: dict[str, Any]) -> None:
    planned = _planned(default_plan)
    assert "module.lakeinlet.aws_sqs_queue_redrive_allow_policy.dlq[0]" in planned
    config = default_plan["configuration"]["root_module"]["module_calls"]["lakeinlet"]["module"]
    [allow] = [r for r in config["resources"] if r["type"] == "aws_sqs_queue_redrive_allow_policy"]
    assert "aws_sqs_queue.events.arn" in allow["expressions"]["redrive_allow_policy"]["references"]
    assert not [a for a in planned if "aws_sns" in a], "SNS resources without sns_fanout"


def test_sns_fanout_routes_the_bucket_through_a_topic(tf: Terraform) -> None:
    planned = _planned(tf.plan_json(BUCKET | {"sns_fanout": "true"}))
    sub = planned["module.lakeinlet.aws_sns_topic_subscription.queue[0]"]
    assert sub["protocol"] == "sqs" and sub["raw_message_delivery"] is False
    assert "module.lakeinlet.aws_sns_topic_policy.events[0]" in planned
    notification = planned["module.lakeinlet.aws_s3_bucket_notification.events[0]"]
    assert notification["queue"] == []
    [topic] = notification["topic"]  # its events are a set in the plan
    assert (sorted(topic["events"]), topic["filter_prefix"]) == (sorted(LOCAL_STACK_EVENTS), "incoming/")


def test_the_loader_may_register_tables_only_in_its_glue_databases(
        terraform_bin: str, tf_mirror: Path, tf_moto: MotoServer, tmp_path: Path) -> None:
    # The module itself: the example's policy waits for its bucket, so a plan shows no JSON.
    module = Terraform.prepare(terraform_bin, tf_mirror, tmp_path, tf_moto.endpoint, root=".")

    def glue(variables: dict[str, str]) -> list[dict[str, Any]]:
        outputs = module.plan_json(BUCKET | variables)["planned_values"]["outputs"]
        policy = json.loads(outputs["loader_policy_json"]["value"])
        return [s for s in policy["Statement"] if any(a.startswith("glue:") for a in _list(s["Action"]))]

    assert glue({}) == []
    [statement] = glue({"glue_databases": '["sales"]'})
    resources = sorted(r.split(":", 5)[5] for r in _list(statement["Resource"]))
    assert resources == ["catalog", "database/sales", "table/sales/*"]
    assert "glue:DeleteTable" not in statement["Action"] and "glue:UpdateTable" in statement["Action"]


def test_the_loader_may_clean_up_sources_only_with_after_load(
        terraform_bin: str, tf_mirror: Path, tf_moto: MotoServer, tmp_path: Path) -> None:
    module = Terraform.prepare(terraform_bin, tf_mirror, tmp_path, tf_moto.endpoint, root=".")

    def cleanup(variables: dict[str, str]) -> dict[str, dict[str, Any]]:
        plan = module.plan_json(BUCKET | {"source_prefix": "incoming/"} | variables)
        outputs = plan["planned_values"]["outputs"]
        policy = json.loads(outputs["loader_policy_json"]["value"])
        return {s["Sid"]: s for s in policy["Statement"]
                if s.get("Sid") in ("CleanUpLoadedSources", "WriteSourceArchive", "ListSourceArchive")}

    assert cleanup({}) == {}
    [delete] = cleanup({"after_load": "delete"}).values()
    assert (_list(delete["Action"]), _list(delete["Resource"])) == (
        ["s3:DeleteObject"], ["arn:aws:s3:::tf-plan-landing/incoming/*"])
    found = cleanup({"after_load": "archive:s3://vault/old/"})
    assert sorted(_list(found["CleanUpLoadedSources"]["Action"])) == [
        "s3:DeleteObject", "s3:GetObjectVersion"]
    assert _list(found["WriteSourceArchive"]["Resource"]) == ["arn:aws:s3:::vault/old/*"]
    assert _list(found["ListSourceArchive"]["Resource"]) == ["arn:aws:s3:::vault"]
    with pytest.raises(TerraformError, match="after_load: expected off, delete or archive"):
        module.run("plan", *[f"-var={k}={v}" for k, v in (BUCKET | {"after_load": "move"}).items()])


def _list(value: Any) -> list[str]:
    return value if isinstance(value, list) else [value]


def test_module_refuses_a_loader_policy_over_the_whole_bucket(tf: Terraform) -> None:
    with pytest.raises(TerraformError, match=r"must not\s+write the whole bucket"):
        tf.run("plan", *[f"-var={k}={v}" for k, v in (BUCKET | {"lake_prefix": ""}).items()])

