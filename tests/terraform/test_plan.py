"""Plans of the module: defaults, the paths the apply test cannot take on moto (the DLQ's redrive
allow policy, SNS fan-out), the policy documents' shapes and the guards on bad settings.

Every variable set is planned once, all in one `terraform test` process (`plan_runs`), offline;
the tests below read the runs they need.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.dev.emulator import NOTIFIED_EVENTS
from lakeinlet.queue_settings import QueueSettings
from tests.terraform.policy_shape import normalise
from tests.terraform.terraform_cli import PlanRun, Terraform

pytestmark = pytest.mark.terraform

BUCKET = "tf-plan-landing"
LANDING = {"bucket_name": BUCKET, "source_prefix": "incoming/"}
# What lakeinlet.dev.emulator.set_notifications subscribes the local stack's queue to.
LOCAL_STACK_EVENTS = NOTIFIED_EVENTS
NOTIFICATION = "aws_s3_bucket_notification.events[0]"
ACCOUNT = "123456789012"  # the test runs' caller (terraform_cli.TEST_PROVIDER)
QUEUE_ARN = f"arn:aws:sqs:us-east-1:{ACCOUNT}:lakeinlet-events"
OWN_KEY = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/0d5b1f7e-0000-4000-8000-000000000001"
REDRIVER = f"arn:aws:iam::{ACCOUNT}:role/dlq-redrive"

RUNS: dict[str, dict[str, Any]] = {
    "module_defaults": {"bucket_name": BUCKET},
    "landing_prefix": LANDING,
    "separate_lake": {"bucket_name": BUCKET, "lake_bucket_name": "tf-plan-lake"},
    "source_over_lake": {"bucket_name": BUCKET, "source_prefix": "lake"},
    "changelog_under_source": LANDING | {"changelog_prefix": "incoming/changelog/"},
    "archive_over_lake": LANDING | {"after_load": f"archive:s3://{BUCKET}"},
    "glue_delete": LANDING | {"glue_databases": ["sales"], "after_load": "delete"},
    "archive_fanout": LANDING | {"after_load": "archive:s3://vault/old/", "sns_fanout": True},
    "topic_with_own_key": LANDING | {"sns_fanout": True, "sns_kms_master_key_id": OWN_KEY,
                                     "queue_sender_arns": [REDRIVER]},
    "bad_values": LANDING | {"lake_prefix": "", "after_load": "move",
                             "sns_kms_master_key_id": "alias/aws/sns"},
}


@pytest.fixture(scope="module")
def plans(terraform_bin: str, tf_mirror: Path,
          tmp_path_factory: pytest.TempPathFactory) -> dict[str, PlanRun]:
    module = Terraform.prepare(terraform_bin, tf_mirror, tmp_path_factory.mktemp("tf-plan"),
                               None, root=".")
    return module.plan_runs(RUNS)


def planned(plans: dict[str, PlanRun], run: str) -> PlanRun:
    """A run that must have planned: its errors are the failure message otherwise."""
    found = plans[run]
    assert not found.errors, f"{run} was refused:\n" + "\n".join(found.errors)
    return found


def test_unset_queue_settings_are_the_local_stack_settings(plans: dict[str, PlanRun]) -> None:
    """One set of queue settings: QueueSettings (`lakeinlet local up`) and variables.tf."""
    run = planned(plans, "landing_prefix")
    assert run.outputs["queue_settings"] == QueueSettings().as_dict()
    [queue] = run.resources[NOTIFICATION]["queue"]
    assert (sorted(queue["events"]), queue["filter_prefix"]) == (sorted(LOCAL_STACK_EVENTS), "incoming/")


def test_default_plan_restricts_the_dlq_to_the_event_queue(plans: dict[str, PlanRun]) -> None:
    run = planned(plans, "landing_prefix")
    assert "aws_sqs_queue_redrive_allow_policy.dlq[0]" in run.resources
    assert not [a for a in run.resources if "aws_sns" in a], "SNS resources without sns_fanout"


def test_sns_fanout_routes_the_bucket_through_a_topic(plans: dict[str, PlanRun]) -> None:
    run = planned(plans, "archive_fanout")
    sub = run.resources["aws_sns_topic_subscription.queue[0]"]
    assert sub["protocol"] == "sqs" and sub["raw_message_delivery"] is False
    assert "aws_sns_topic_policy.events[0]" in run.resources
    notification = run.resources[NOTIFICATION]
    assert notification["queue"] == []
    [topic] = notification["topic"]  # its events are a set in the plan
    assert (sorted(topic["events"]), topic["filter_prefix"]) == (sorted(LOCAL_STACK_EVENTS), "incoming/")


def test_glue_table_actions_reach_only_the_tables_of_its_databases(plans: dict[str, PlanRun]) -> None:
    """Database actions on the catalog and the databases; table actions on their tables (Glue
    also checks the catalog and database ARNs for a table call, as its policy examples show)."""
    def glue(run: str) -> dict[str, tuple[list[str], list[str]]]:
        policy = normalise(planned(plans, run).policy("loader_policy_json"))
        return {sid: (s["Action"], sorted(r.split(":", 5)[5] for r in s["Resource"]))
                for sid, s in policy.items() if any(a.startswith("glue:") for a in s["Action"])}

    assert glue("landing_prefix") == {}
    assert glue("glue_delete") == {
        "ReadOrCreateGlueDatabases": (["glue:CreateDatabase", "glue:GetDatabase"],
                                      ["catalog", "database/sales"]),
        "RegisterTablesInGlue": (["glue:BatchCreatePartition", "glue:CreateTable", "glue:GetTable",
                                  "glue:UpdateTable"], ["catalog", "database/sales", "table/sales/*"])}


def test_the_loader_may_clean_up_sources_only_with_after_load(plans: dict[str, PlanRun]) -> None:
    def cleanup(run: str) -> dict[str, dict[str, Any]]:
        found = normalise(planned(plans, run).policy("loader_policy_json"))
        return {sid: s for sid, s in found.items() if sid in (
            "CleanUpLoadedSources", "CleanUpLoadedVersions", "ReadLoadedVersions", "WriteSourceArchive",
            "ListSourceArchive")}

    assert cleanup("landing_prefix") == {}
    sources = [f"arn:aws:s3:::{BUCKET}/incoming/*"]
    delete, by_version = cleanup("glue_delete").values()
    assert (delete["Action"], delete["Resource"]) == (["s3:DeleteObject"], sources)
    assert (by_version["Action"], by_version["Resource"]) == (["s3:DeleteObjectVersion"], sources)
    found = cleanup("archive_fanout")
    assert (found["CleanUpLoadedSources"]["Action"], found["ReadLoadedVersions"]["Action"]) == (
        ["s3:DeleteObject"], ["s3:GetObjectVersion"])
    assert found["ReadLoadedVersions"]["Resource"] == sources
    assert found["WriteSourceArchive"]["Resource"] == ["arn:aws:s3:::vault/old/*"]
    assert found["ListSourceArchive"]["Resource"] == ["arn:aws:s3:::vault"]


def test_cleanup_may_delete_only_with_if_match(plans: dict[str, PlanRun]) -> None:
    """S3's documented form for forcing conditional deletes: Null s3:if-match false. A delete
    that could not be told the loaded etag would remove an object overwritten since."""
    for run in ("glue_delete", "archive_fanout"):
        delete = normalise(planned(plans, run).policy("loader_policy_json"))["CleanUpLoadedSources"]
        assert delete["Condition"] == {"Null": {"s3:if-match": ["false"]}}, run


def test_module_refuses_bad_values_each_with_its_reason(plans: dict[str, PlanRun]) -> None:
    errors = _refusals(plans, "bad_values")
    assert any("after_load: expected off, delete or archive" in e for e in errors), errors
    assert any("the loader must not write the whole bucket" in e for e in errors), errors
    assert any("S3 cannot publish to a topic encrypted with the AWS-managed key alias/aws/sns" in e
               for e in errors), errors
    assert len(errors) == 3, errors

def _refusals(plans: dict[str, PlanRun], run: str) -> list[str]:
    """The run's error messages, whitespace collapsed (Terraform wraps long ones)."""
    return [" ".join(e.split()) for e in plans[run].errors]


def test_module_defaults_are_refused_with_one_message_saying_what_to_set(
        plans: dict[str, PlanRun]) -> None:
    """Lake in the landing bucket and no source prefix: the notification would cover the lake
    (the poller fed on its own changelog, cleanup deleted the tables)."""
    [error] = _refusals(plans, "module_defaults")
    assert "Resource precondition failed" in error
    assert f"s3://{BUCKET}/lakeinlet/" in error
    assert 'Set source_prefix to the prefix your producers write under (e.g. "incoming/"), ' \
           "or lake_bucket_name to another bucket" in error


def test_a_source_prefix_that_nests_the_lake_or_the_changelog_is_refused(
        plans: dict[str, PlanRun]) -> None:
    [lake] = _refusals(plans, "source_over_lake")  # "lake" is a prefix of "lakeinlet/"
    assert 'source_prefix "lake" and lake_prefix "lakeinlet/" nest' in lake
    [changelog] = _refusals(plans, "changelog_under_source")
    assert 'source_prefix "incoming/" and changelog_prefix "incoming/changelog/" nest' in changelog
    assert "Set them to prefixes neither of which starts with the other" in changelog


def test_a_lake_in_its_own_bucket_leaves_the_whole_landing_bucket_to_the_sources(
        plans: dict[str, PlanRun]) -> None:
    run = planned(plans, "separate_lake")
    [queue] = run.resources[NOTIFICATION]["queue"]
    assert queue["filter_prefix"] is None
    assert run.outputs["lake_uri"] == "s3://tf-plan-lake/lakeinlet"


def test_an_archive_over_the_lake_or_the_sources_is_refused(plans: dict[str, PlanRun]) -> None:
    """Archived copies under source_prefix are notified and loaded again; an archive prefix
    above the lake makes the cleanup grants cover the lake."""
    errors = _refusals(plans, "archive_over_lake")
    assert any(f"archives into s3://{BUCKET}/, which holds the sources (source_prefix " in e
               for e in errors), errors
    assert any(f"archives into s3://{BUCKET}/, above the lake" in e for e in errors), errors
    assert len(errors) == 2, errors


def test_environment_outputs_tell_both_jobs_their_bounds(plans: dict[str, PlanRun]) -> None:
    """The loader's prefix, bucket allow-list and own locations; the poller's own locations."""
    run = planned(plans, "landing_prefix")
    lake, changelog = f"s3://{BUCKET}/lakeinlet", f"s3://{BUCKET}/lakeinlet/changelog"
    assert run.outputs["load_environment"] == {
        "LAKEINLET__TABLES__CHANGELOG": changelog, "LAKEINLET__PLAN__PREFIX": "incoming/",
        "LAKEINLET__PLAN__BUCKETS": BUCKET, "LAKEINLET__PLAN__LAKE": lake}
    poll = run.outputs["poll_environment"]
    assert (poll["LAKEINLET__FILTER__LAKE"], poll["LAKEINLET__CHANGELOG__URI"]) == (lake, changelog)
    assert planned(plans, "separate_lake").outputs["load_environment"]["LAKEINLET__PLAN__PREFIX"] == ""


def test_listings_are_bound_to_the_prefixes_each_job_reads(plans: dict[str, PlanRun]) -> None:
    """s3:ListBucket only with s3:prefix conditions: the loader lists the source prefix (backfills)
    and its lake, the event source its changelog, cleanup its archive."""
    landing, lake = f"arn:aws:s3:::{BUCKET}", "arn:aws:s3:::tf-plan-lake"
    assert _listings(planned(plans, "landing_prefix").policy("loader_policy_json")) == {
        landing: {"incoming/*", "lakeinlet/*", "lakeinlet/changelog/*"}}
    assert _listings(planned(plans, "landing_prefix").policy("event_source_policy_json")) == {
        landing: {"lakeinlet/changelog/*"}}
    assert _listings(planned(plans, "separate_lake").policy("loader_policy_json")) == {
        landing: {"*"}, lake: {"lakeinlet/*", "lakeinlet/changelog/*"}}
    archive = _listings(planned(plans, "archive_fanout").policy("loader_policy_json"))
    assert archive["arn:aws:s3:::vault"] == {"old/*"}


def _listings(policy: dict[str, Any]) -> dict[str, set[str]]:
    """Bucket ARN -> the key prefixes s3:ListBucket is allowed for ("*": no condition)."""
    found: dict[str, set[str]] = {}
    for st in normalise(policy).values():
        if "s3:ListBucket" not in st["Action"]:
            continue
        assert set(st["Condition"]) <= {"StringLike"}, st
        prefixes = set(st["Condition"].get("StringLike", {}).get("s3:prefix", ["*"]))
        for bucket in st["Resource"]:
            found.setdefault(bucket, set()).update(prefixes)
    return found


def test_the_loader_never_deletes_in_the_changelog(plans: dict[str, PlanRun]) -> None:
    """Backfills append to the changelog (conditional PUTs of new files); only the event source
    (`lakeinlet-poll maintain`) vacuums it."""
    changelog = f"arn:aws:s3:::{BUCKET}/lakeinlet/changelog/*"
    loader = normalise(planned(plans, "landing_prefix").policy("loader_policy_json"))
    denied = {sid: s for sid, s in loader.items() if s["Effect"] == "Deny"}
    assert denied == {"NeverDeleteInTheChangelog": {
        "Effect": "Deny", "Principal": None, "Action": ["s3:DeleteObject", "s3:DeleteObjectVersion"],
        "Resource": [changelog], "Condition": {}}}
    assert loader["AppendToChangelog"]["Action"] == ["s3:AbortMultipartUpload", "s3:GetObject",
                                                     "s3:PutObject"]
    poller = normalise(planned(plans, "landing_prefix").policy("event_source_policy_json"))
    assert "s3:DeleteObject" in poller["ReadWriteChangelog"]["Action"]


def test_the_event_queue_takes_sends_only_from_its_bucket_or_topic(plans: dict[str, PlanRun]) -> None:
    """IAM principals (of the account or not) are denied SendMessage on the event queue: S3 or
    SNS deliver (allowed by aws:SourceArn), and no lakeinlet job sends there (`--poison dlq`
    sends to the DLQ). queue_sender_arns names exceptions, e.g. a role that redrives the DLQ."""
    deny = {"Effect": "Deny", "Principal": "*", "Action": ["sqs:SendMessage"], "Resource": [QUEUE_ARN]}
    queue = normalise(planned(plans, "landing_prefix").policy("queue_policy_json"))
    assert queue["DenySendersOtherThanTheSource"] == deny | {
        "Condition": {"BoolIfExists": {"aws:PrincipalIsAWSService": ["false"]}}}
    queue = normalise(planned(plans, "topic_with_own_key").policy("queue_policy_json"))
    assert queue["DenySendersOtherThanTheSource"] == deny | {"Condition": {
        "BoolIfExists": {"aws:PrincipalIsAWSService": ["false"]},
        "ArnNotLikeIfExists": {"aws:PrincipalArn": [REDRIVER]}}}
    assert queue["AllowSourceToSend"]["Principal"] == {"Service": ["sns.amazonaws.com"]}


def test_the_dlq_refuses_requests_without_tls(plans: dict[str, PlanRun]) -> None:
    dlq = planned(plans, "landing_prefix").resources["aws_sqs_queue.dlq"]
    assert normalise(json.loads(dlq["policy"])) == {"DenyInsecureTransport": {
        "Effect": "Deny", "Principal": "*", "Action": ["sqs:*"], "Resource": [QUEUE_ARN + "-dlq"],
        "Condition": {"Bool": {"aws:SecureTransport": ["false"]}}}}


def test_the_topic_is_encrypted_by_default_with_a_key_s3_may_use(plans: dict[str, PlanRun]) -> None:
    """S3 cannot publish to a topic under the AWS-managed alias/aws/sns: the module makes a key
    whose policy lets S3 encrypt for this topic only, unless sns_kms_master_key_id names one."""
    run = planned(plans, "archive_fanout")
    assert run.unknown["aws_sns_topic.events[0]"].get("kms_master_key_id") is True  # the new key's
    key = run.resources["aws_kms_key.sns[0]"]
    assert key["enable_key_rotation"] is True
    s3 = normalise(json.loads(key["policy"]))["AllowBucketNotificationsToEncrypt"]
    assert (s3["Principal"], s3["Action"], s3["Condition"]) == (
        {"Service": ["s3.amazonaws.com"]}, ["kms:Decrypt", "kms:GenerateDataKey"],
        {"StringEquals": {"kms:EncryptionContext:aws:sns:topicArn": [
            f"arn:aws:sns:us-east-1:{ACCOUNT}:lakeinlet-events-topic"]}})
    own = planned(plans, "topic_with_own_key")
    assert own.resources["aws_sns_topic.events[0]"]["kms_master_key_id"] == OWN_KEY
    assert not [a for a in own.resources if a.startswith("aws_kms_key")]
