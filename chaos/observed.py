"""What a run left behind, the checker's view of the outcome, read straight from the emulator: the
target through delta-rs, hudi-rs or pyiceberg (never the Spark that wrote it, nor lakeinlet's
ledger, checkpoint or adapters), the changelog through delta-rs, the queues through SQS's counters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
import pyarrow as pa
from botocore.config import Config

ROW_COLUMNS = ["order_id", "_source_key", "_source_etag"]


@dataclass(frozen=True)
class Location:
    """Where a run's tables live on the emulator (`endpoint` is the emulator, not the proxy)."""

    endpoint: str
    target_format: str
    table: str
    """s3://lake/orders"""
    changelog: str
    region: str = "us-east-1"
    iceberg_db: str | None = None
    """The SQLite file of the JDBC catalog the loaders share."""
    iceberg_table: str = "chaos.orders"
    iceberg_catalog: str = "lakeinlet"


def target_rows(loc: Location) -> list[tuple[int, str, str]]:
    """(order_id, _source_key, _source_etag) of every row of the target; [] before its creation."""
    table = {"delta": _delta_rows, "hudi": _hudi_rows, "iceberg": _iceberg_rows}[loc.target_format](loc)
    if table is None or table.num_rows == 0:
        return []
    cols = [table.column(c).to_pylist() for c in ROW_COLUMNS]
    return [(int(i), str(k), str(e or "").strip('"')) for i, k, e in zip(*cols, strict=True)]


def target_commits(loc: Location) -> int:
    """How many commits the target's own log holds (information only: retries add commits)."""
    if loc.target_format == "delta":
        dt = _delta(loc, loc.table)
        return 0 if dt is None else len(dt.history())
    if loc.target_format == "hudi":
        t = _hudi(loc)
        return 0 if t is None else len(t.get_timeline().get_completed_commits())
    t = _iceberg(loc)
    return 0 if t is None else len(t.history())


def changelog_refs(loc: Location) -> set[tuple[str, str]]:
    """(key, etag) of every ObjectCreated event in the changelog."""
    dt = _delta(loc, loc.changelog)
    if dt is None:
        return set()
    tab = dt.to_pyarrow_dataset().to_table(columns=["key", "etag", "event_name"]).to_pylist()
    return {(r["key"], (r["etag"] or "").strip('"')) for r in tab
            if str(r["event_name"]).startswith("ObjectCreated")}


def queue_left(endpoint: str, queue_url: str, region: str = "us-east-1") -> int:
    """Messages still in the queue: visible, in flight and delayed."""
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=region, aws_access_key_id="testing",
                       aws_secret_access_key="testing",
                       config=Config(retries={"mode": "standard", "max_attempts": 5}))
    attrs = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    return sum(int(attrs.get(a, 0)) for a in ("ApproximateNumberOfMessages",
                                              "ApproximateNumberOfMessagesNotVisible",
                                              "ApproximateNumberOfMessagesDelayed"))


def _s3_options(loc: Location) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": loc.endpoint, "AWS_REGION": loc.region, "AWS_ALLOW_HTTP": "true",
            "AWS_FORCE_PATH_STYLE": "true", "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing"}


def _delta(loc: Location, uri: str) -> Any:
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(uri, storage_options=_s3_options(loc))
    except TableNotFoundError:
        return None


def _delta_rows(loc: Location) -> pa.Table | None:
    dt = _delta(loc, loc.table)
    return None if dt is None else dt.to_pyarrow_dataset().to_table(columns=ROW_COLUMNS)


def _hudi(loc: Location) -> Any:
    from hudi import HudiTableBuilder

    options = {"aws_endpoint_url": loc.endpoint, "aws_region": loc.region, "aws_allow_http": "true",
               "aws_virtual_hosted_style_request": "false", "aws_access_key_id": "testing",
               "aws_secret_access_key": "testing"}
    try:
        return HudiTableBuilder.from_base_uri(loc.table).with_storage_options(options).build()
    except Exception as exc:  # hudi-rs has no typed "no table" error
        if "hoodie.properties" in str(exc) or "not found" in str(exc).lower():
            return None
        raise


def _hudi_rows(loc: Location) -> pa.Table | None:
    t = _hudi(loc)
    if t is None or not t.get_timeline().get_completed_commits():
        return None
    batches = t.read()
    return pa.Table.from_batches(batches).select(ROW_COLUMNS) if batches else None


def _iceberg(loc: Location) -> Any:
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NoSuchTableError

    if not loc.iceberg_db:
        raise ValueError("an iceberg target needs the catalog's SQLite file (iceberg_db)")
    catalog = load_catalog(loc.iceberg_catalog, type="sql", uri=f"sqlite:///{loc.iceberg_db}",
                           warehouse=loc.table.rsplit("/", 1)[0], **{
                               "s3.endpoint": loc.endpoint, "s3.region": loc.region,
                               "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
                               "s3.force-virtual-addressing": "false",
                               "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"})
    try:
        return catalog.load_table(loc.iceberg_table)
    except NoSuchTableError:
        return None


def _iceberg_rows(loc: Location) -> pa.Table | None:
    t = _iceberg(loc)
    return None if t is None else t.scan(selected_fields=tuple(ROW_COLUMNS)).to_arrow()
