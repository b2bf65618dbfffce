"""boto3 clients and delta-rs storage options built from configuration, never from code.

Endpoints, region and credentials come from configuration or the AWS default chain; botocore's
own retry mode handles throttling (no retries are stacked on top of it here).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import boto3
from botocore.config import Config as BotoConfig

from lakeinlet.config import setting


@dataclass(frozen=True)
class AwsSection:
    """AWS endpoints, region and client behaviour (credentials come from the default chain)."""

    endpoint_url: str | None = setting(
        None, "Endpoint for S3 and SQS (an emulator such as moto or LocalStack); unset on AWS.",
        env="AWS_ENDPOINT_URL", metavar="URL")
    region: str = setting(
        "us-east-1", "AWS region of the queue and buckets.", env="AWS_DEFAULT_REGION")
    max_attempts: int = setting(
        8, "botocore retry attempts (adaptive mode) for throttling and transient network errors.")

    def validate(self) -> list[str]:
        problems = []
        if self.endpoint_url and urlparse(self.endpoint_url).scheme not in ("http", "https"):
            problems.append(f"--endpoint-url: expected http(s)://host:port, found {self.endpoint_url!r}")
        if self.max_attempts < 1:
            problems.append(f"--max-attempts: expected at least 1, found {self.max_attempts}")
        return problems


def client(service: str, aws: AwsSection, **extra: Any) -> Any:
    """A boto3 client for `service` honouring the endpoint, region and retry settings."""
    cfg = BotoConfig(retries={"max_attempts": aws.max_attempts, "mode": "adaptive"},
                     max_pool_connections=extra.pop("max_pool_connections", 32))
    if service == "s3" and aws.endpoint_url:
        cfg = cfg.merge(BotoConfig(s3={"addressing_style": "path"}))
    session: Any = boto3.session.Session()  # typed loosely: `service` is a runtime string
    made = session.client(service, region_name=aws.region, endpoint_url=aws.endpoint_url or None,
                          config=cfg, **extra)
    made.meta.events.register("before-send", _keep_alive)
    return made


def _keep_alive(request: Any, **_: Any) -> None:
    """Ask for a persistent connection explicitly. HTTP/1.1 keeps connections by default, but
    some servers close after every response unless asked (LocalStack behind hypercorn does:
    measured, one new TCP connection per SQS call), which costs both sides a connection set-up
    per request."""
    request.headers["Connection"] = "keep-alive"


def storage_options(aws: AwsSection, table_uri: str) -> dict[str, str] | None:
    """delta-rs (object_store) options for a table URI; None for local paths.

    Credentials are passed through from the environment only when set there, so that on a real
    cluster the default chain (instance profile, IRSA) is used by delta-rs itself.
    """
    if not table_uri.startswith(("s3://", "s3a://")):
        return None
    opts = {"AWS_REGION": aws.region}
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        if os.environ.get(name):
            opts[name] = os.environ[name]
    if aws.endpoint_url:
        opts["AWS_ENDPOINT_URL"] = aws.endpoint_url
        opts["AWS_ALLOW_HTTP"] = "true" if aws.endpoint_url.startswith("http://") else "false"
        opts["AWS_FORCE_PATH_STYLE"] = "true"
    # delta-rs commits on S3 with conditional PUT (If-None-Match): safe without a lock.
    opts["aws_conditional_put"] = "etag"
    return opts


def delta_uri(table_uri: str) -> str:
    """delta-rs speaks `s3://`; Spark on some platforms is configured with `s3a://`."""
    return "s3://" + table_uri[len("s3a://"):] if table_uri.startswith("s3a://") else table_uri


def absolute_local(uri: str) -> str:
    """A local table path made absolute (hudi-rs and Iceberg metadata need one; `./lake/t` is a
    README path); URIs with a scheme as they are."""
    return uri if "://" in uri or not uri else os.path.abspath(uri)


def spark_uri(uri: str, scheme: str) -> str:
    """The URI as Spark addresses it (`s3a://` with hadoop-aws, `s3://` on EMR); local paths as is."""
    for prefix in ("s3://", "s3a://"):
        if uri.startswith(prefix):
            return f"{scheme}://" + uri[len(prefix):]
    return uri
