"""What a catalog (Glue, a Hive metastore) should say of one target table, in Glue's TableInput
shape that both registries write, and how a stored entry differs from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lakeinlet.errors import ConfigError
from lakeinlet.incremental.ports import CatalogFormat
from lakeinlet.storage import TableLocation

_SIMPLE = {pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int", pa.int64(): "bigint",
           pa.float32(): "float", pa.float64(): "double", pa.bool_(): "boolean", pa.string(): "string",
           pa.large_string(): "string", pa.string_view(): "string", pa.binary(): "binary",
           pa.large_binary(): "binary", pa.binary_view(): "binary", pa.date32(): "date"}


def hive_type(t: pa.DataType) -> str:
    """The Hive/Glue column type for a pyarrow type; `string` for types Hive has no name for."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_decimal128(t):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, pa.ListType | pa.LargeListType | pa.FixedSizeListType):
        return f"array<{hive_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type)},{hive_type(t.item_type)}>"
    if pa.types.is_struct(t):
        # Lowercase as Hudi's own sync writes types; Hive resolves field names case-insensitively.
        return "struct<" + ",".join(f"{f.name.lower()}:{hive_type(f.type)}" for f in t) + ">"
    return "string"


# Every table is EXTERNAL (TableType and EXTERNAL=TRUE), so dropping it in an engine leaves the data:
# Trino's DeltaLakeMetadata.deltaTableProperties and Hudi's AWSGlueCatalogSyncClient.createTable both
# write that. Both formats carry the location again as the SerDe parameter `path` (see table_input);
# each format's own parameters and classes come from its folder (`targets/*/catalog.py`).
@dataclass(frozen=True)
class TableEntry:
    """What Glue should say of one target table. Columns carry the table's schema even for Delta
    (whose engines read the log): Athena's Lake Formation, views and row filters need them."""

    fmt: CatalogFormat
    location: str
    schema: pa.Schema
    partition_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Athena and Glue read s3:// only; Spark may be configured with s3a://.
        object.__setattr__(self, "location", TableLocation.of(self.location).uri)

    def table_input(self, name: str) -> dict[str, Any]:
        """Glue's TableInput for this table under `name` (partition columns only in PartitionKeys)."""
        fmt = self.fmt
        types = {f.name: hive_type(f.type) for f in self.schema}
        data = [(c, t) for c, t in types.items() if c not in self.partition_by]
        # HiveSyncTool registers Hudi's meta columns unless told to omit them
        data = [(c, "string") for c in fmt.meta_columns if c not in types] + data
        keys = [(c, types.get(c, "string")) for c in self.partition_by]  # Hudi's default: string
        return {"Name": name, "TableType": "EXTERNAL_TABLE", "Parameters": dict(fmt.parameters),
                "PartitionKeys": _columns(keys),
                "StorageDescriptor": {
                    "Columns": _columns(data), "Location": self.location,
                    "InputFormat": fmt.input_format, "OutputFormat": fmt.output_format,
                    "SerdeInfo": {"SerializationLibrary": fmt.serde,
                                  "Parameters": {**fmt.serde_parameters, "path": self.location}}}}

    def partition_location(self, values: dict[str, str]) -> str:
        """The folder of one partition: the Hudi target writes hive-style paths (`day=1/region=eu`)."""
        return self.location.rstrip("/") + "/" + "/".join(f"{c}={values[c]}" for c in self.partition_by)


def table_entry(fmt: CatalogFormat | None, target_format: str, location: str, schema: pa.Schema,
                partition_by: Sequence[str] = ()) -> TableEntry:
    """The entry of a table whose target describes itself as `fmt` (None: a format no registry
    takes).

    Raises:
        ConfigError: `fmt` is None.
    """
    if fmt is None:
        raise ConfigError([f"catalog registration: expected a delta or hudi table, found {target_format}"])
    return TableEntry(fmt, location, schema, tuple(partition_by))


def _columns(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    # Glue and Hive keep column names lowercase; comparing what Glue returns needs the same.
    return [{"Name": name.lower(), "Type": type_} for name, type_ in pairs]


def differences(have: dict[str, Any], want: dict[str, Any]) -> list[str]:
    """How a Glue table (`have`) differs from a TableInput (`want`), one phrase each."""
    hsd, wsd = have.get("StorageDescriptor", {}), want["StorageDescriptor"]
    got = {c["Name"]: c["Type"] for c in hsd.get("Columns", [])}
    wanted = {c["Name"]: c["Type"] for c in wsd["Columns"]}
    found = []
    if missing := [c for c in wanted if c not in got]:
        found.append("missing columns " + ", ".join(missing))
    if extra := [c for c in got if c not in wanted]:
        found.append("extra columns " + ", ".join(extra))
    if changed := [f"{c} {got[c]} (expected {t})" for c, t in wanted.items() if got.get(c, t) != t]:
        found.append("column types " + ", ".join(changed))
    keys, want_keys = (", ".join(f"{k['Name']} {k['Type']}" for k in t.get("PartitionKeys", []))
                       for t in (have, want))
    if keys != want_keys:
        found.append(f"partition keys ({keys}) (expected ({want_keys}))")
    if hsd.get("Location") != wsd["Location"]:
        found.append(f"location {hsd.get('Location')} (expected {wsd['Location']})")
    have_settings = _settings(have)
    if drift := [k for k, v in _settings(want).items() if have_settings.get(k) != v]:
        found.append("format settings " + ", ".join(drift))
    return found


def _settings(table: dict[str, Any]) -> dict[str, Any]:
    """A table's format in one map: parameters, SerDe parameters and classes (extra ones allowed)."""
    sd = table.get("StorageDescriptor", {})
    serde = sd.get("SerdeInfo", {})
    return {**table.get("Parameters", {}),
            **{f"serde {k}": v for k, v in serde.get("Parameters", {}).items()},
            "InputFormat": sd.get("InputFormat"), "OutputFormat": sd.get("OutputFormat"),
            "SerializationLibrary": serde.get("SerializationLibrary")}
