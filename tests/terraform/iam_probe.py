"""Judge IAM documents by what they let a caller do: moto checks identity policies when its
request authentication is switched on, for calls signed with an IAM user's keys.

moto evaluates Action and Resource (no Condition keys, no resource policies), and authorises
batch SQS calls by their own action names, so probes use single calls.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

DENIED_CODES = {"AccessDenied", "AccessDeniedException"}


@contextmanager
def policies_enforced(endpoint: str) -> Iterator[None]:
    """Every request to this moto server is authenticated and authorised while inside."""
    _reset_auth(endpoint, b"0")
    try:
        yield
    finally:
        _reset_auth(endpoint, b"inf")


def _reset_auth(endpoint: str, count: bytes) -> None:
    # Not form-encoded (urllib's default): moto reads the raw body as the count.
    request = urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=count, method="POST",
                                     headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@contextmanager
def user_keys(iam: Any, name: str, policy_arn: str) -> Iterator[dict[str, str]]:
    """An IAM user holding only `policy_arn`, as client kwargs (its access keys); removed after,
    so that `terraform destroy` can delete the policy (a policy still attached cannot be)."""
    iam.create_user(UserName=name)
    iam.attach_user_policy(UserName=name, PolicyArn=policy_arn)
    key = iam.create_access_key(UserName=name)["AccessKey"]
    try:
        yield {"aws_access_key_id": key["AccessKeyId"],
               "aws_secret_access_key": key["SecretAccessKey"]}
    finally:
        iam.delete_access_key(UserName=name, AccessKeyId=key["AccessKeyId"])
        iam.detach_user_policy(UserName=name, PolicyArn=policy_arn)
        iam.delete_user(UserName=name)


def signed_client(service: str, endpoint: str, keys: dict[str, str]) -> Any:
    config = Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"})
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1", config=config,  # type: ignore[call-overload]
                        **keys)


def outcome(call: Callable[[], object]) -> str:
    """'allowed' or 'denied'; any other error is a broken probe and is raised."""
    try:
        call()
    except ClientError as exc:
        if _is_access_denied(exc.response["Error"]):
            return "denied"
        raise
    return "allowed"


def _is_access_denied(error: Mapping[str, Any]) -> bool:
    # moto answers JSON-protocol SQS calls with an XML error body that botocore cannot parse:
    # it reports code "403" and the body as the message. A bad signature is 403 too; not this.
    if error.get("Code") == "403":
        return "<Code>AccessDenied</Code>" in error.get("Message", "")
    return error.get("Code") in DENIED_CODES


def outcomes(probes: dict[str, Callable[[], object]]) -> dict[str, str]:
    """Run probes in order (some consume what an earlier one received)."""
    return {name: outcome(call) for name, call in probes.items()}
