"""The table features delta-spark requires that delta-rs leaves out: a table whose protocol lists
its features (writer version 7, e.g. for a timestamp without time zone) must list `invariants`
when a column is NOT NULL (delta-spark enforces NOT NULL as an invariant), or delta-spark refuses
to read it (DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH)."""

from __future__ import annotations

import pyarrow as pa
from deltalake import DeltaTable, TableFeatures


def missing_features(dt: DeltaTable) -> list[TableFeatures]:
    """Features the table's metadata needs that its protocol does not list (pure over `dt`)."""
    protocol = dt.protocol()
    if protocol.min_writer_version < 7 or "invariants" in (protocol.writer_features or []):
        return []
    strict = any(not f.nullable for f in pa.schema(dt.schema().to_arrow()))
    return [TableFeatures.Invariants] if strict else []


def list_features(dt: DeltaTable) -> bool:
    """Add the features `missing_features` finds (one metadata commit); whether it did."""
    missing = missing_features(dt)
    if missing:
        dt.alter.add_feature(missing, allow_protocol_versions_increase=True)
    return bool(missing)
