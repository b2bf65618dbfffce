"""Registration of target tables in catalogs query engines read (Glue, Hive)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeinlet.errors import ConfigError

if TYPE_CHECKING:
    from lakeinlet.aws import AwsSection
    from lakeinlet.incremental.ports import RegistryPort

KINDS = ("glue", "hive")
_NAME = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class CatalogRef:
    """A table in a catalog: `glue:sales.orders` is table `orders` of the Glue database `sales`."""

    kind: str
    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.database}.{self.table}"


def parse_catalog(text: str) -> CatalogRef:
    """`glue:DATABASE.TABLE` or `hive:DATABASE.TABLE`. Names are lowercased first, as Glue and the
    Hive metastore store them, so `glue:Sales.Orders` and `glue:sales.orders` are one table."""
    kind, _, rest = text.partition(":")
    database, _, table = rest.lower().partition(".")
    if kind.lower() not in KINDS or not _NAME.fullmatch(database) or not _NAME.fullmatch(table):
        raise ConfigError([f"catalog {text!r}: expected glue:DATABASE.TABLE or hive:DATABASE.TABLE, "
                           "names of letters, digits and underscores"])
    return CatalogRef(kind.lower(), database, table)


def check_catalog(text: str | None, target_format: str, hive_uris: str | None) -> list[str]:
    """The problems of a table's `--catalog` setting."""
    if not text:
        return []
    try:
        ref = parse_catalog(text)
    except ConfigError as exc:
        return [f"--catalog: {p}" for p in exc.problems]
    if ref.kind == "hive" and not hive_uris:
        return [f"--catalog {text}: give the metastore with --hive-metastore-uris thrift://HOST:PORT "
                "(on a cluster, the value of hive.metastore.uris)"]
    if target_format == "iceberg":
        return [f"--catalog {text}: an Iceberg table lives in its own catalog; name it with "
                "--iceberg-catalog glue and --iceberg-table DATABASE.TABLE"]
    return []


def registry_of(ref: CatalogRef, aws: AwsSection, hive_uris: str | None) -> RegistryPort:
    """The registry that writes `ref`'s catalog: Glue through `aws`, or the Hive metastore at
    `hive_uris` (each adapter imported only when used)."""
    if ref.kind == "hive":
        from lakeinlet.incremental.registry.hive import HiveRegistry

        return HiveRegistry(hive_uris or "")
    from lakeinlet.incremental.registry.glue import GlueRegistry

    return GlueRegistry(aws)
