"""VPC flow logs to S3 in Parquet with Hive-compatible prefixes: `<prefix>/AWSLogs/aws-account-id=<a>/
aws-service=vpcflowlogs/aws-region=<r>/year=YYYY/month=MM/day=DD/[hour=HH/]<a>_vpcflowlogs_<r>_
<flow log id>_<YYYYMMDDTHHmmZ>_<hash>.log.parquet`, the default record format's fields."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.data.producers.corpus import Produced, put

ACCOUNT, REGION = "123456789012", "eu-west-1"
SCHEMA = pa.schema([("version", pa.int32()), ("account_id", pa.string()), ("interface_id", pa.string()),
                    ("srcaddr", pa.string()), ("dstaddr", pa.string()), ("srcport", pa.int32()),
                    ("dstport", pa.int32()), ("protocol", pa.int32()), ("packets", pa.int64()),
                    ("bytes", pa.int64()), ("start", pa.int64()), ("end", pa.int64()),
                    ("action", pa.string()), ("log_status", pa.string())])


def _record(i: int) -> dict[str, Any]:
    return {"version": 2, "account_id": ACCOUNT, "interface_id": "eni-0a1b2c3d4e5f60718",
            "srcaddr": f"10.0.1.{i}", "dstaddr": "10.0.2.7", "srcport": 40000 + i, "dstport": 443,
            "protocol": 6, "packets": 10 + i, "bytes": 840 * (i + 1), "start": 1795683600 + i,
            "end": 1795683660 + i, "action": "ACCEPT" if i % 3 else "REJECT", "log_status": "OK"}


def flow_logs(s3: Any, bucket: str) -> Produced:
    folders = (f"vpc/AWSLogs/aws-account-id={ACCOUNT}/aws-service=vpcflowlogs/aws-region={REGION}/"
               "year=2026/month=11/")
    files = {"27": [_record(i) for i in range(3)], "28": [_record(i) for i in range(3, 5)]}
    keys = {day: (f"{folders}day={day}/{ACCOUNT}_vpcflowlogs_{REGION}_fl-0a1b2c3d4e5f6a7b8_"
                  f"202611{day}T0905Z_3b9a8f1c.log.parquet") for day in files}
    events = []
    for day, records in files.items():
        out = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(records, SCHEMA), out, compression="gzip")
        events.append(put(s3, bucket, keys[day], out.getvalue()))
    columns = {"aws_account_id": ACCOUNT, "aws_service": "vpcflowlogs", "aws_region": REGION,
               "year": "2026", "month": "11"}  # the Hive folders, renamed by column_names = "rename"
    rows = tuple(r | columns | {"day": day} for day, records in files.items() for r in records)
    return Produced("vpc_flow_logs", (tuple(events),), rows, frozenset(keys.values()))
