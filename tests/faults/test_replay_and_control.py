"""Seeded replay, runtime on/off, the cap, and the fault log with its counters."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import BotoCoreError, ClientError

from chaos import FaultPlan, FaultProxy, FaultRule, count_faults, read_fault_log
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.faults.conftest import aws_client

pytestmark = pytest.mark.integration
MIXED = FaultPlan((FaultRule("HeadObject", "slow_down_503", probability=0.3),
                   FaultRule("GetObject", "reset_before", probability=0.2),
                   FaultRule("GetObject", "truncate", probability=0.2)))


@pytest.fixture
def bucket(moto_server: MotoServer) -> str:
    name = unique("replay")
    s3 = aws_client("s3", moto_server.endpoint)
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="k", Body=b"x" * 64)
    return name


def fails(call: Any) -> bool:
    try:
        call()
        return False
    except (ClientError, BotoCoreError):
        return True


def run_sequence(proxy: FaultProxy, bucket: str, n: int = 15) -> list[tuple[int, str, str, bool]]:
    """The same 2n requests, one at a time and one attempt each: (request number, op, kind, failed)."""
    start, s3, failed = proxy.stats()["seq"], aws_client("s3", proxy.endpoint, 1), []
    for _ in range(n):
        failed.append(fails(lambda: s3.head_object(Bucket=bucket, Key="k")))
        failed.append(fails(lambda: s3.get_object(Bucket=bucket, Key="k")["Body"].read()))
    return [(r.seq - start, r.operation, r.fault, failed[r.seq - start - 1]) for r in proxy.faults()]


def test_same_seed_and_plan_give_the_same_faults_for_the_same_requests(
        proxy: FaultProxy, bucket: str) -> None:
    runs = []
    for seed in (11, 11, 12):
        proxy.set_plan(MIXED, seed=seed)
        runs.append(run_sequence(proxy, bucket))
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert {kind for _, _, kind, _ in runs[0]} == {"slow_down_503", "reset_before", "truncate"}
    assert all(failed for *_, failed in runs[0])  # every logged fault failed its request


def test_faults_switch_off_and_on_at_runtime(proxy: FaultProxy, bucket: str) -> None:
    proxy.set_plan(FaultPlan((FaultRule("HeadObject", "http_500", probability=1.0),)))
    s3 = aws_client("s3", proxy.endpoint, 1)
    head: Any = lambda: s3.head_object(Bucket=bucket, Key="k")  # noqa: E731
    with pytest.raises(ClientError):
        head()
    proxy.enable(False)
    assert head()["ContentLength"] == 64 and head()["ContentLength"] == 64
    proxy.enable(True)
    with pytest.raises(ClientError):
        head()
    stats = proxy.stats()
    assert (stats["requests"], stats["faults"], stats["enabled"]) == (
        {"HeadObject": 4}, {"HeadObject/http_500": 2}, True)


def test_cap_limits_the_total_number_of_faults(proxy: FaultProxy, bucket: str) -> None:
    proxy.set_plan(FaultPlan((FaultRule("*", "throttle", probability=1.0),), max_faults=3))
    s3 = aws_client("s3", proxy.endpoint, attempts=5)  # 3 throttles, then the 4th attempt passes
    got = s3.head_object(Bucket=bucket, Key="k")
    assert got["ResponseMetadata"]["RetryAttempts"] == 3
    assert proxy.stats()["total_faults"] == 3


def test_fault_log_records_each_fault_and_counts_agree_with_the_live_counters(
        proxy: FaultProxy, bucket: str) -> None:
    proxy.set_plan(FaultPlan((FaultRule("GetObject", "error_after", nth=(1, 3)),
                              FaultRule("HeadObject", "reset_before", nth=(2,)))))
    s3 = aws_client("s3", proxy.endpoint, 1)
    for _ in range(3):
        fails(lambda: s3.get_object(Bucket=bucket, Key="k"))
        fails(lambda: s3.head_object(Bucket=bucket, Key="k"))
    records = proxy.faults()
    assert [(r.operation, r.fault, r.occurrence, r.forwarded, r.upstream_status) for r in records] == [
        ("GetObject", "error_after", 1, True, 200), ("HeadObject", "reset_before", 2, False, None),
        ("GetObject", "error_after", 3, True, 200)]
    assert {(r.bucket, r.key, r.service) for r in records} == {(bucket, "k", "s3")}
    assert count_faults(records) == {("GetObject", "error_after"): 2, ("HeadObject", "reset_before"): 1}
    assert proxy.stats()["faults"] == {"GetObject/error_after": 2, "HeadObject/reset_before": 1}
    everything = read_fault_log(proxy.log_path)  # all plans of this proxy, in the order written
    assert everything[-3:] == records and len({r.generation for r in everything}) >= 1
