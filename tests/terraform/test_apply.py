"""infra/terraform applied to the moto server: what was created, parity with `lakeinlet local up`,
the two jobs running on the provisioned queue, and the IAM documents judged by signed calls.

The tests share one apply (module scope) and run in file order; the last one destroys it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import MotoServer, queue_policy
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.queue_settings import QueueSettings
from lakeinlet.storage import delta_uri, storage_options
from tests.conftest import unique
from tests.terraform.iam_probe import outcomes, policies_enforced, signed_client, user_keys
from tests.terraform.policy_shape import normalise
from tests.terraform.terraform_cli import REPO, Terraform

pytestmark = pytest.mark.terraform

SOURCE_PREFIX = "incoming/"  # the example's default


@dataclass
class Applied:
    tf: Terraform
    variables: dict[str, str]
    out: dict[str, Any]
    endpoint: str
    destroyed: bool = field(default=False)

    @property
    def bucket(self) -> str:
        return str(self.out["bucket"])

    def client(self, service: str) -> Any:
        return client(service, AwsSection(endpoint_url=self.endpoint))


@pytest.fixture(scope="module")
def applied(terraform_bin: str, tf_mirror: Path, tf_moto: MotoServer,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Applied]:
    tf = Terraform.prepare(terraform_bin, tf_mirror, tmp_path_factory.mktemp("tf-apply"),
                           tf_moto.endpoint)
    variables = {"bucket_name": unique("tf-land"), "name": unique("tf-events"),
                 # moto never stores RedriveAllowPolicy: see variables.tf and test_plan.py.
                 "restrict_dlq_sources": "false", "force_destroy": "true"}
    tf.apply(variables)
    stack = Applied(tf, variables, tf.outputs(), tf_moto.endpoint)
    yield stack
    if not stack.destroyed:
        _empty_bucket(stack.client("s3"), stack.bucket)
        tf.destroy(variables)


def _empty_bucket(s3: Any, bucket: str) -> None:
    """Delete every version and delete marker first. Against moto, the provider's force_destroy
    of this versioned bucket never finished once Spark and delta-rs had written to it (seen
    twice, 300 s); emptying it here keeps `destroy` about the resources."""
    for _ in range(20):
        listing = s3.list_object_versions(Bucket=bucket)
        doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                  for v in listing.get("Versions", []) + listing.get("DeleteMarkers", [])]
        if not doomed:
            return
        s3.delete_objects(Bucket=bucket, Delete={"Objects": doomed[:1000], "Quiet": True})
    raise AssertionError(f"s3://{bucket} still holds object versions after 20 rounds of deletes")


def test_queue_has_the_local_stack_settings(applied: Applied) -> None:
    settings = QueueSettings()
    sqs = applied.client("sqs")
    attrs = sqs.get_queue_attributes(QueueUrl=applied.out["queue_url"],
                                     AttributeNames=["All"])["Attributes"]
    assert {k: attrs[k] for k in settings.queue_attributes()} == settings.queue_attributes()
    redrive = json.loads(attrs["RedrivePolicy"])
    assert redrive["deadLetterTargetArn"] == applied.out["dlq_arn"]
    assert int(redrive["maxReceiveCount"]) == settings.max_receive_count
    dlq = sqs.get_queue_attributes(QueueUrl=applied.out["dlq_url"],
                                   AttributeNames=["All"])["Attributes"]
    assert dlq["MessageRetentionPeriod"] == str(settings.dlq_message_retention_seconds)
    assert dlq["SqsManagedSseEnabled"] == "true"
    assert applied.out["queue_settings"] == settings.as_dict()


# Statements only the Terraform policy has: the local stack leaves them out, since neither
# emulator enforces a queue policy (test_plan.py checks their shape).
TERRAFORM_ONLY = {"DenySendersOtherThanTheSource"}


def test_queue_policy_is_the_local_stack_policy(applied: Applied) -> None:
    sqs = applied.client("sqs")
    attrs = sqs.get_queue_attributes(QueueUrl=applied.out["queue_url"],
                                     AttributeNames=["Policy"])["Attributes"]
    bucket_arn = f"arn:aws:s3:::{applied.bucket}"
    local = normalise(queue_policy(applied.out["queue_arn"], "s3.amazonaws.com", bucket_arn))
    for policy in (json.loads(attrs["Policy"]), json.loads(applied.out["queue_policy_json"])):
        found = normalise(policy)
        assert set(found) - set(local) == TERRAFORM_ONLY
        assert {sid: st for sid, st in found.items() if sid not in TERRAFORM_ONLY} == local
    dlq = sqs.get_queue_attributes(QueueUrl=applied.out["dlq_url"], AttributeNames=["Policy"])
    assert set(normalise(json.loads(dlq["Attributes"]["Policy"]))) == {"DenyInsecureTransport"}


def test_bucket_notification_is_as_declared(applied: Applied) -> None:
    conf = applied.client("s3").get_bucket_notification_configuration(Bucket=applied.bucket)
    assert "TopicConfigurations" not in conf
    [queue] = conf["QueueConfigurations"]
    assert queue["QueueArn"] == applied.out["queue_arn"]
    assert sorted(queue["Events"]) == ["s3:LifecycleExpiration:*", "s3:ObjectCreated:*", "s3:ObjectRemoved:*"]
    rules = queue["Filter"]["Key"]["FilterRules"]
    assert [(r["Name"].lower(), r["Value"]) for r in rules] == [("prefix", SOURCE_PREFIX)]


def test_outputs_configure_the_jobs(applied: Applied) -> None:
    env = applied.out["poll_environment"]
    assert env["LAKEINLET__QUEUE__QUEUE_URL"] == applied.out["queue_url"]
    assert env["LAKEINLET__CHANGELOG__URI"] == applied.out["changelog_uri"]
    assert applied.out["changelog_uri"] == f"s3://{applied.bucket}/lakeinlet/changelog"
    assert env["LAKEINLET__FILTER__BUCKETS"] == applied.bucket
    assert env["LAKEINLET__FILTER__LAKE"] == applied.out["lake_uri"]
    load = applied.out["load_environment"]
    assert (load["LAKEINLET__TABLES__CHANGELOG"], load["LAKEINLET__PLAN__PREFIX"]) == (
        applied.out["changelog_uri"], SOURCE_PREFIX)


def test_poll_and_load_run_on_the_provisioned_stack(applied: Applied) -> None:
    """Uploads -> notification -> queue -> lakeinlet-poll -> changelog -> lakeinlet-load -> table."""
    poll = pytest.importorskip("lakeinlet.sources.job", reason="the event source is not installed")
    pytest.importorskip("lakeinlet.incremental.job", reason="the loader is not installed")
    s3, queue_url = applied.client("s3"), applied.out["queue_url"]
    files = make_files("json", 3, rows_per_file=4, prefix=SOURCE_PREFIX)
    for f in files:
        s3.put_object(Bucket=applied.bucket, Key=f.key, Body=f.body)
    # Outside the notification's prefix filter: must reach neither the changelog nor the table.
    s3.put_object(Bucket=applied.bucket, Key="elsewhere/part-99999.jsonl", Body=files[0].body)
    changelog, table = applied.out["changelog_uri"], applied.out["lake_uri"] + "/orders"
    assert poll.main(["--queue-url", queue_url, "--changelog", changelog, "--endpoint-url",
                      applied.endpoint, "--until-empty", "--wait-seconds", "1",
                      "--bucket", applied.bucket]) == 0
    aws = AwsSection(endpoint_url=applied.endpoint)
    events = pa.table(DeltaChangelog(changelog, aws).read_versions(-1))
    assert sorted(events.column("key").to_pylist()) == sorted(f.key for f in files)
    _run_loader(["run", "--changelog", changelog, "--table", table, "--endpoint-url",
                 applied.endpoint, "--source-format", "json", "--drain", "--schema", SCHEMA_DDL])
    rows = DeltaTable(delta_uri(table), storage_options=storage_options(aws, table))
    loaded = rows.to_pyarrow_dataset().to_table()
    assert sorted(loaded.column("order_id").to_pylist()) == \
        sorted(r["order_id"] for f in files for r in f.rows)
    assert set(loaded.column("_source_bucket").to_pylist()) == {applied.bucket}
    depth = applied.client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    assert set(depth.values()) == {"0"}, f"messages left on the queue after the poll: {depth}"


def _run_loader(args: list[str]) -> None:
    """The loader in its own interpreter: a fresh local[2] Spark pointed at this tier's moto
    (a session left by the spark tier would carry another endpoint)."""
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                        "LAKEINLET_JARS": os.environ.get("LAKEINLET_JARS", str(REPO / ".jars"))}
    proc = subprocess.run([sys.executable, "-m", "lakeinlet.incremental", *args,
                           "--master", "local[2]"], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, f"lakeinlet-load exited {proc.returncode}:\n{proc.stderr[-4000:]}"


@dataclass(frozen=True)
class Probe:
    """What the IAM probes touch: the stack's objects, and a queue and bucket outside it."""

    bucket: str
    queue_url: str
    dlq_url: str
    other_bucket: str
    other_queue_url: str
    notified_key: str = SOURCE_PREFIX + "probe.jsonl"
    unnotified_key: str = "elsewhere/probe.jsonl"


@pytest.fixture(scope="module")
def probe(applied: Applied) -> Probe:
    s3, sqs = applied.client("s3"), applied.client("sqs")
    other_bucket = unique("tf-other")
    s3.create_bucket(Bucket=other_bucket)
    p = Probe(applied.bucket, applied.out["queue_url"], applied.out["dlq_url"], other_bucket,
              sqs.create_queue(QueueName=unique("tf-other"))["QueueUrl"])
    for bucket, key in [(p.bucket, p.notified_key), (p.bucket, p.unnotified_key),
                        (other_bucket, p.notified_key)]:
        s3.put_object(Bucket=bucket, Key=key, Body=b'{"order_id": 1}\n')
    return p


def test_event_source_policy_allows_only_its_queue_and_changelog(applied: Applied,
                                                                 probe: Probe) -> None:
    with user_keys(applied.client("iam"), unique("poll"),
                   applied.out["event_source_policy_arn"]) as keys:
        sqs, s3 = (signed_client(s, applied.endpoint, keys) for s in ("sqs", "s3"))
        seen = _event_source_outcomes(sqs, s3, applied.endpoint, probe)
    allowed = {"receive", "get queue attributes", "change visibility", "delete", "write the changelog",
               "vacuum the changelog", "move a poison message to the DLQ"}
    assert seen == {name: "allowed" if name in allowed else "denied" for name in seen}
    assert len(seen) == 13


def _event_source_outcomes(sqs: Any, s3: Any, endpoint: str, probe: Probe) -> dict[str, str]:
    q, received = probe.queue_url, {}
    probes = {
        "receive": lambda: received.update(sqs.receive_message(QueueUrl=q, WaitTimeSeconds=0)),
        "get queue attributes": lambda: sqs.get_queue_attributes(QueueUrl=q, AttributeNames=["All"]),
        "change visibility": lambda: sqs.change_message_visibility(
            QueueUrl=q, ReceiptHandle=received["Messages"][0]["ReceiptHandle"], VisibilityTimeout=0),
        "delete": lambda: sqs.delete_message(
            QueueUrl=q, ReceiptHandle=received["Messages"][0]["ReceiptHandle"]),
        "write the changelog": lambda: s3.put_object(
            Bucket=probe.bucket, Key="lakeinlet/changelog/_probe", Body=b"x"),
        "vacuum the changelog": lambda: s3.delete_object(Bucket=probe.bucket,
                                                         Key="lakeinlet/changelog/_probe"),
        "send to the queue": lambda: sqs.send_message(QueueUrl=q, MessageBody="{}"),
        "move a poison message to the DLQ": lambda: sqs.send_message(QueueUrl=probe.dlq_url,
                                                                     MessageBody="{}"),
        "receive from another queue": lambda: sqs.receive_message(
            QueueUrl=probe.other_queue_url, WaitTimeSeconds=0),
        "purge the queue": lambda: sqs.purge_queue(QueueUrl=q),
        "read a landing object": lambda: s3.get_object(Bucket=probe.bucket, Key=probe.notified_key),
        "write a target table": lambda: s3.put_object(
            Bucket=probe.bucket, Key="lakeinlet/orders/_probe", Body=b"x"),
        "read another bucket": lambda: s3.get_object(Bucket=probe.other_bucket,
                                                     Key=probe.notified_key),
    }
    with policies_enforced(endpoint):
        return outcomes(probes)


def test_loader_policy_allows_only_its_prefixes(applied: Applied, probe: Probe) -> None:
    with user_keys(applied.client("iam"), unique("load"), applied.out["loader_policy_arn"]) as keys:
        sqs, s3 = (signed_client(s, applied.endpoint, keys) for s in ("sqs", "s3"))
        seen = _loader_outcomes(sqs, s3, applied.endpoint, probe)
    allowed = {"read a notified object", "list for a backfill", "write the lake", "read the lake",
               "delete in the lake", "read the changelog", "append to the changelog"}
    assert seen == {name: "allowed" if name in allowed else "denied" for name in seen}
    assert len(seen) == 15


def _loader_outcomes(sqs: Any, s3: Any, endpoint: str, probe: Probe) -> dict[str, str]:
    lake_key = "lakeinlet/orders/_probe"
    probes = {
        "read a notified object": lambda: s3.get_object(Bucket=probe.bucket, Key=probe.notified_key),
        "list for a backfill": lambda: s3.list_objects_v2(Bucket=probe.bucket, Prefix=SOURCE_PREFIX),
        "write the lake": lambda: s3.put_object(Bucket=probe.bucket, Key=lake_key, Body=b"x"),
        "read the lake": lambda: s3.get_object(Bucket=probe.bucket, Key=lake_key),
        "delete in the lake": lambda: s3.delete_object(Bucket=probe.bucket, Key=lake_key),
        "read the changelog": lambda: s3.list_objects_v2(Bucket=probe.bucket,
                                                         Prefix="lakeinlet/changelog/"),
        "append to the changelog": lambda: s3.put_object(
            Bucket=probe.bucket, Key="lakeinlet/changelog/_loader_probe", Body=b"x"),
        # Only the event source vacuums the changelog (an explicit deny: the lake grant covers it).
        "delete in the changelog": lambda: s3.delete_object(Bucket=probe.bucket,
                                                            Key="lakeinlet/changelog/_loader_probe"),
        "read outside the source prefix": lambda: s3.get_object(Bucket=probe.bucket,
                                                                Key=probe.unnotified_key),
        "write the landing prefix": lambda: s3.put_object(
            Bucket=probe.bucket, Key=SOURCE_PREFIX + "forged.jsonl", Body=b"x"),
        "read another bucket": lambda: s3.get_object(Bucket=probe.other_bucket,
                                                     Key=probe.notified_key),
        "list another bucket": lambda: s3.list_objects_v2(Bucket=probe.other_bucket),
        "receive from the queue": lambda: sqs.receive_message(QueueUrl=probe.queue_url,
                                                              WaitTimeSeconds=0),
        "send to the queue": lambda: sqs.send_message(QueueUrl=probe.queue_url, MessageBody="{}"),
        "purge the queue": lambda: sqs.purge_queue(QueueUrl=probe.queue_url),
    }
    with policies_enforced(endpoint):
        return outcomes(probes)


def test_destroy_removes_the_stack(applied: Applied) -> None:
    """Runs last in this file: everything Terraform created is gone afterwards."""
    _empty_bucket(applied.client("s3"), applied.bucket)
    applied.tf.destroy(applied.variables)
    applied.destroyed = True
    sqs = applied.client("sqs")
    left = sqs.list_queues(QueueNamePrefix=applied.variables["name"]).get("QueueUrls", [])
    assert left == []
    buckets = {b["Name"] for b in applied.client("s3").list_buckets()["Buckets"]}
    assert applied.bucket not in buckets
    policies = applied.client("iam").list_policies(Scope="Local")["Policies"]
    assert not [p for p in policies if p["PolicyName"].startswith(applied.variables["name"])]
