"""The cluster tier's view of a target table, read by an engine other than the Spark that wrote it:
delta-rs for Delta, hudi-rs for Hudi, pyiceberg (through the run's SQL catalog) for Iceberg."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

LINEAGE = ("_source_bucket", "_source_key", "_source_etag", "_source_event_time", "_ingest_batch")
REGION = "us-east-1"


def read_target(target_format: str, uri: str, endpoint: str, rest_uri: str | None = None) -> pa.Table:
    """Every row of the table at `uri` (`s3://lake/orders…` on the emulator); empty before it exists.
    An Iceberg table is found in the REST catalog at `rest_uri` by its location."""
    reader = {"delta": _delta, "hudi": _hudi, "iceberg": _iceberg}[target_format]
    return reader(uri, endpoint, rest_uri)


def _delta(uri: str, endpoint: str, _: str | None) -> pa.Table:
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    options = {"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true",
               "AWS_FORCE_PATH_STYLE": "true", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing"}
    try:
        return DeltaTable(uri, storage_options=options).to_pyarrow_dataset().to_table()
    except TableNotFoundError:
        return pa.table({})


def _hudi(uri: str, endpoint: str, _: str | None) -> pa.Table:
    from hudi import HudiTableBuilder

    options = {"aws_endpoint_url": endpoint, "aws_region": REGION, "aws_allow_http": "true",
               "aws_virtual_hosted_style_request": "false", "aws_access_key_id": "testing",
               "aws_secret_access_key": "testing"}
    try:
        table = HudiTableBuilder.from_base_uri(uri).with_storage_options(options).build()
    except Exception as exc:  # hudi-rs has no typed "no table" error
        if "hoodie.properties" in str(exc) or "not found" in str(exc).lower():
            return pa.table({})
        raise
    batches = table.read()
    return pa.Table.from_batches(batches) if batches else pa.table({})


def _iceberg(uri: str, endpoint: str, rest_uri: str | None) -> pa.Table:
    """The table of the REST catalog whose location is `uri` (whatever its identifier)."""
    from pyiceberg.catalog import load_catalog

    if not rest_uri:
        raise ValueError("an iceberg target needs the REST catalog's URI")
    props = {"s3.endpoint": endpoint, "s3.region": REGION, "s3.access-key-id": "testing",
             "s3.secret-access-key": "testing", "s3.force-virtual-addressing": "false",
             "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    catalog: Any = load_catalog("cluster-tier", type="rest", uri=rest_uri, **props)
    wanted = uri.split("://", 1)[1].rstrip("/")
    for namespace in catalog.list_namespaces():
        for ident in catalog.list_tables(namespace):
            table = catalog.load_table(ident)
            if table.location().split("://", 1)[-1].rstrip("/") == wanted:
                return table.scan().to_arrow()
    return pa.table({})
