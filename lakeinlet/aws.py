"""boto3 clients built from configuration, never from code.

Endpoints, region and credentials come from configuration or the AWS default chain. botocore's
adaptive retry mode retries every call made through these clients (throttling, 5xx, dropped
connections; `max_attempts` retries after the first try). Callers translate what is left and must
not retry such a call again: `lakeinlet.retry` is for what botocore cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import boto3
import botocore.loaders
import botocore.session
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


_LOADER = botocore.loaders.create_loader()
"""The service models every session reads, parsed once per process: each session would read and
parse them again (the S3 model alone is megabytes of JSON), which costs more than the calls a
short-lived client makes."""


def client(service: str, aws: AwsSection, **extra: Any) -> Any:
    """A boto3 client for `service` honouring the endpoint, region and retry settings.

    Each client gets a session of its own (a session is not safe to share between threads); the
    sessions share one model loader."""
    cfg = BotoConfig(retries={"max_attempts": aws.max_attempts, "mode": "adaptive"},
                     max_pool_connections=extra.pop("max_pool_connections", 32))
    if service == "s3" and aws.endpoint_url:
        cfg = cfg.merge(BotoConfig(s3={"addressing_style": "path"}))
    core = botocore.session.get_session()
    core.register_component("data_loader", _LOADER)
    session: Any = boto3.session.Session(botocore_session=core)  # loosely typed: `service` is a string
    made = session.client(service, region_name=aws.region, endpoint_url=aws.endpoint_url or None,
                          config=cfg, **extra)
    made.meta.events.register("before-send", _keep_alive)
    return made


def _keep_alive(request: Any, **_: Any) -> None:
    """Ask for a persistent connection explicitly. HTTP/1.1 keeps connections by default, but
    some servers close after every response unless asked (LocalStack behind hypercorn opens one
    TCP connection per SQS call otherwise), which costs both sides a connection set-up per
    request."""
    request.headers["Connection"] = "keep-alive"
