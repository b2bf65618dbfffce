"""What the proxy costs per request: the same boto3 calls direct and through it, in one run; prints
medians in ms and the difference (a figure, not a pass/fail check)."""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from chaos.plan import FaultPlan
from chaos.proxy import FaultProxy
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer


def _clients(endpoint: str) -> tuple[Any, Any]:
    cfg = Config(retries={"total_max_attempts": 1, "mode": "standard"}, s3={"addressing_style": "path"})
    session: Any = boto3.session.Session(  # typed loosely: the service is a runtime string
        aws_access_key_id=TEST_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=TEST_CREDENTIALS["AWS_SECRET_ACCESS_KEY"], region_name="us-east-1")
    return (session.client("s3", endpoint_url=endpoint, config=cfg),
            session.client("sqs", endpoint_url=endpoint, config=cfg))


def _calls(endpoint: str, queue_url: str) -> dict[str, Callable[[], object]]:
    s3, sqs = _clients(endpoint)
    url = queue_url.replace(queue_url.split("/123456789012/")[0], endpoint)
    return {"HeadObject": lambda: s3.head_object(Bucket="overhead", Key="k"),
            "GetObject 64 KiB": lambda: s3.get_object(Bucket="overhead", Key="k")["Body"].read(),
            "SendMessage": lambda: sqs.send_message(QueueUrl=url, MessageBody="m")}


def _time_ms(call: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(emulator: str, proxy: str, rounds: int = 10, block: int = 10) -> dict[str, tuple[float, float]]:
    """Median ms per call, (direct, proxied), for each call kind; `rounds` alternating blocks of
    direct and proxied calls, so that load from other processes falls on both alike."""
    s3, sqs = _clients(emulator)
    s3.create_bucket(Bucket="overhead")
    s3.put_object(Bucket="overhead", Key="k", Body=b"x" * 65536)
    queue_url = sqs.create_queue(QueueName="overhead")["QueueUrl"]
    sides = {"direct": _calls(emulator, queue_url), "proxied": _calls(proxy, queue_url)}
    samples: dict[tuple[str, str], list[float]] = {}
    for name in sides["direct"]:
        for side in sides:
            sides[side][name]()  # warm the connection pool
        for _ in range(rounds):
            for side, calls in sides.items():
                samples.setdefault((name, side), []).extend(_time_ms(calls[name], block))
    return {name: (statistics.median(samples[name, "direct"]), statistics.median(samples[name, "proxied"]))
            for name in sides["direct"]}


def main(argv: list[str] | None = None) -> int:
    """Start moto and an empty-plan proxy, measure, print one line per call kind."""
    with tempfile.TemporaryDirectory() as tmp, MotoServer() as moto, FaultProxy(
            moto.endpoint, FaultPlan(), 0, Path(tmp) / "faults.jsonl") as proxy:
        results = measure(moto.endpoint, proxy.endpoint)
    print(f"{'call':<18} {'direct ms':>10} {'proxied ms':>11} {'overhead ms':>12}")
    for name, (direct, proxied) in results.items():
        print(f"{name:<18} {direct:>10.2f} {proxied:>11.2f} {proxied - direct:>12.2f}")
    return 0
