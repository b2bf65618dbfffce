"""AWS CloudTrail to S3: `<prefix>/AWSLogs/<account>/CloudTrail/<region>/YYYY/MM/DD/<account>_
CloudTrail_<region>_<YYYYMMDDTHHmmZ>_<16 characters>.json.gz`, one `{"Records": [...]}` document
per file; with log file validation, digest files under `AWSLogs/<account>/CloudTrail-Digest/`."""

from __future__ import annotations

import gzip
import json
from typing import Any

from tests.data.producers.corpus import Produced, put

ACCOUNT, REGION, DAY = "123456789012", "eu-west-1", "2026/11/27"


def _event(i: int, name: str) -> dict[str, Any]:
    """A management event with the documented record fields (CloudTrail record contents)."""
    return {"eventVersion": "1.09", "eventTime": f"2026-11-27T09:0{i}:00Z", "eventSource": "s3.amazonaws.com",
            "eventName": name, "awsRegion": REGION, "sourceIPAddress": f"203.0.113.{i}",
            "userAgent": "aws-cli/2.15.0", "requestID": f"REQ{i:04d}", "eventID": f"e-{i:04d}",
            "readOnly": name.startswith(("Get", "List")), "eventType": "AwsApiCall",
            "managementEvent": True, "recipientAccountId": ACCOUNT, "eventCategory": "Management",
            "userIdentity": {"type": "IAMUser", "principalId": "AIDAEXAMPLE", "accountId": ACCOUNT,
                             "arn": f"arn:aws:iam::{ACCOUNT}:user/alice", "userName": "alice"},
            "requestParameters": {"bucketName": "shop-data", "key": f"k{i}"}}


def trail(s3: Any, bucket: str) -> Produced:
    logs = {"20261127T0905Z_Ab3dEf6hIj9kLm2n": [_event(1, "PutObject"), _event(2, "GetObject")],
            "20261127T0910Z_Zx8cVb7nMq5wEr4t": [_event(3, "DeleteObject")]}
    base = f"trail/AWSLogs/{ACCOUNT}/CloudTrail/{REGION}/{DAY}/{ACCOUNT}_CloudTrail_{REGION}_"
    files = {f"{base}{name}.json.gz": records for name, records in logs.items()}
    digest = (f"trail/AWSLogs/{ACCOUNT}/CloudTrail-Digest/{REGION}/{DAY}/{ACCOUNT}_CloudTrail-Digest_"
              f"{REGION}_management_{REGION}_20261127T100000Z.json.gz")
    manifest = {"awsAccountId": ACCOUNT, "digestStartTime": "2026-11-27T09:00:00Z",
                "digestEndTime": "2026-11-27T10:00:00Z", "digestS3Bucket": bucket,
                "digestSignatureAlgorithm": "SHA256withRSA", "previousDigestSignature": None,
                "logFiles": [{"s3Bucket": bucket, "s3Object": k, "hashValue": "00",
                              "hashAlgorithm": "SHA-256"} for k in files]}
    events = [put(s3, bucket, k, gzip.compress(json.dumps({"Records": r}).encode()))
              for k, r in files.items()]
    events.append(put(s3, bucket, digest, gzip.compress(json.dumps(manifest).encode())))
    return Produced("cloudtrail", (tuple(events),), tuple({"Records": r} for r in files.values()),
                    frozenset(files), filtered={digest: "--exclude-glob */CloudTrail-Digest/*"})
