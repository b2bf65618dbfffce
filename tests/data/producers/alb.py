"""Application Load Balancer access logs: `<prefix>/AWSLogs/<account>/elasticloadbalancing/<region>/
YYYY/MM/DD/<account>_elasticloadbalancing_<region>_app.<name>.<id>_<end time>_<ip>_<random>.log.gz`
(space-separated fields, gzip), and the `ELBAccessLogTestFile` written when logging is enabled."""

from __future__ import annotations

import gzip
from typing import Any

from tests.data.producers.corpus import Produced, put

ACCOUNT, REGION, LB = "123456789012", "eu-west-1", "app/shop-alb/50dc6c495c0c9188"
TEST_FILE = f"alb/AWSLogs/{ACCOUNT}/ELBAccessLogTestFile"


def line(i: int, status: int) -> str:
    """One entry with the documented fields, in order (type … conn_trace_id)."""
    return (f'https 2026-11-27T09:0{i}:12.{i}23456Z {LB} 198.51.100.{i}:4{i}321 10.0.1.15:80 0.000 0.00{i} '
            f'0.000 {status} {status} 34 366 "GET https://shop.example.com:443/p/{i} HTTP/1.1" '
            f'"curl/8.4.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 '
            f'arn:aws:elasticloadbalancing:{REGION}:{ACCOUNT}:targetgroup/shop/73e2d6bc24d8a067 '
            f'"Root=1-6564e2a0-{i:024d}" "shop.example.com" '
            f'"arn:aws:acm:{REGION}:{ACCOUNT}:certificate/12345678-1234-1234-1234-123456789012" 0 '
            f'2026-11-27T09:0{i}:12.{i}00000Z "forward" "-" "-" "10.0.1.15:80" "{status}" "-" "-" '
            f'TID_{i:08x}')


def access_logs(s3: Any, bucket: str) -> Produced:
    day = f"alb/AWSLogs/{ACCOUNT}/elasticloadbalancing/{REGION}/2026/11/27/"
    name = (f"{ACCOUNT}_elasticloadbalancing_{REGION}_app.shop-alb.50dc6c495c0c9188_20261127T09{{}}Z_"
            "10.0.1.15_{}.log.gz")
    files = {day + name.format("05", "2tcq1yid"): [line(1, 200), line(2, 404)],
             day + name.format("10", "5mh3uxkq"): [line(3, 200), line(4, 502), line(5, 200)]}
    events = [put(s3, bucket, k, gzip.compress("".join(x + "\n" for x in lines).encode()))
              for k, lines in files.items()]
    test = b"Enable AccessLog for ELB: shop-alb at 2026-11-27T08:59:58.000Z"
    events.append(put(s3, bucket, TEST_FILE, test))
    return Produced("alb", (tuple(events),), tuple({"value": x} for lines in files.values() for x in lines),
                    frozenset(files), filtered={TEST_FILE: "--exclude-glob *ELBAccessLogTestFile"})
