"""The Iceberg catalog as configuration: one Spark catalog (default name `lakeinlet`), and the same
catalog opened by pyiceberg for metadata queries (checkpoint, history, schema) without the JVM.

`jdbc` (default) keeps tables in a JDBC catalog, by default a SQLite file: its commits are an
atomic compare-and-swap of the metadata location, safe for several loaders on one machine. `hadoop`
is the path-based catalog (local tables only: it needs atomic renames). `rest` and `glue` pass the
options through to Spark and pyiceberg (the catalogs to use on a cluster; not exercised here).
"""

from __future__ import annotations

import functools
import hashlib
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from lakeinlet.aws import AwsSection
from lakeinlet.config import setting

CATALOG_TYPES = ("jdbc", "hadoop", "rest", "glue")


@dataclass(frozen=True)
class IcebergSection:
    """Iceberg target (--target-format iceberg): the catalog that holds the table."""

    iceberg_catalog: str = setting(
        "jdbc", "Catalog type. `jdbc`: a JDBC catalog (atomic commits; default a SQLite file, safe "
        "for several loaders on one machine); `hadoop`: path-based, local tables only; `rest`, "
        "`glue`: the catalogs for a cluster (give their settings with --iceberg-catalog-option).",
        choices=CATALOG_TYPES)
    iceberg_catalog_uri: str | None = setting(
        None, "jdbc: the JDBC URL (default: jdbc:sqlite:<table>.catalog.db beside a local table, "
        "or .lakeinlet/iceberg-catalog.db in the working folder for an s3 table); rest: its URL.",
        metavar="URI")
    iceberg_table: str | None = setting(
        None, "Table identifier in the catalog, namespace.name (default: lakeinlet.<last path "
        "segment of --table>_<hash of its location>); its location is --table.",
        metavar="NAMESPACE.NAME")
    iceberg_catalog_name: str = setting(
        "lakeinlet", "Name of the catalog in Spark (`SELECT … FROM <name>.<namespace>.<table>`) and "
        "in pyiceberg; a JDBC catalog keys its tables by it.", metavar="NAME")
    iceberg_catalog_option: tuple[str, ...] = setting(
        (), "Extra catalog property key=value (repeatable), given to Spark "
        "(spark.sql.catalog.<name>.<key>) and to pyiceberg alike.", metavar="KEY=VALUE")

    def validate(self) -> list[str]:
        bad = [kv for kv in self.iceberg_catalog_option if "=" not in kv]
        problems = [f"--iceberg-catalog-option: expected key=value, found {kv!r}" for kv in bad]
        if self.iceberg_table and self.iceberg_table.count(".") != 1:
            problems.append(f"--iceberg-table: expected namespace.name, found {self.iceberg_table!r}")
        return problems

    @property
    def options(self) -> dict[str, str]:
        return dict(kv.split("=", 1) for kv in self.iceberg_catalog_option)


@dataclass(frozen=True)
class IcebergCatalog:
    """Where one target table lives: catalog settings, identifier and location."""

    section: IcebergSection
    location: str
    """The table location as Spark writes it (`s3a://…` or a local path)."""
    aws: AwsSection

    @property
    def identifier(self) -> str:
        """namespace.name of the table (a Hadoop catalog derives it from the location)."""
        if self.section.iceberg_catalog == "hadoop":
            parent = posixpath.dirname(self._path())
            return f"{_name(posixpath.basename(parent))}.{_name(posixpath.basename(self._path()))}"
        if self.section.iceberg_table:
            return self.section.iceberg_table
        digest = hashlib.sha256(self.location.encode()).hexdigest()[:8]
        return f"lakeinlet.{_name(posixpath.basename(self._path()))}_{digest}"

    @property
    def name(self) -> str:
        return self.section.iceberg_catalog_name

    @property
    def spark_name(self) -> str:
        return f"{self.name}.{self.identifier}"

    def _path(self) -> str:
        return self.location.rstrip("/")

    def _is_local(self) -> bool:
        return urlparse(self.location).scheme in ("", "file")

    def jdbc_uri(self) -> str:
        if self.section.iceberg_catalog_uri:
            return self.section.iceberg_catalog_uri
        local = self._is_local()
        db = f"{self._path()}.catalog.db" if local else os.path.join(".lakeinlet", "iceberg-catalog.db")
        return f"jdbc:sqlite:{os.path.abspath(db)}"

    def warehouse(self) -> str:
        """The catalog's warehouse: the grandparent of a Hadoop table, else the table's parent."""
        up = 2 if self.section.iceberg_catalog == "hadoop" else 1
        path = self._path()
        for _ in range(up):
            path = posixpath.dirname(path)
        return path if not self._is_local() else "file://" + os.path.abspath(path)

    def spark_conf(self) -> dict[str, str]:
        """Spark settings of the `lakeinlet` catalog."""
        pre = f"spark.sql.catalog.{self.name}"
        kind = self.section.iceberg_catalog
        conf = {pre: "org.apache.iceberg.spark.SparkCatalog", f"{pre}.type": kind,
                f"{pre}.cache-enabled": "false"}  # every checkpoint read sees the catalog's main
        if kind in ("jdbc", "hadoop"):
            conf |= {f"{pre}.warehouse": self.warehouse(),
                     f"{pre}.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO"}
        if kind == "jdbc":
            conf |= {f"{pre}.uri": self.jdbc_uri(), f"{pre}.jdbc.schema-version": "V1"}
        if kind == "rest" and self.section.iceberg_catalog_uri:
            conf[f"{pre}.uri"] = self.section.iceberg_catalog_uri
        return conf | {f"{pre}.{k}": v for k, v in self.section.options.items()}

    def load(self) -> Any:
        """The table through pyiceberg (None when it does not exist yet)."""
        from pyiceberg.exceptions import NoSuchTableError

        try:
            if self.section.iceberg_catalog == "hadoop":
                return self._static()
            return self.py_catalog().load_table(self.identifier)
        except (NoSuchTableError, FileNotFoundError):
            return None

    def _static(self) -> Any:
        from pyiceberg.table import StaticTable

        if not os.path.exists(os.path.join(self._path(), "metadata", "version-hint.text")):
            return None
        return StaticTable.from_metadata(self._path(), properties=self.file_io_properties())

    @functools.cached_property
    def _py(self) -> Any:
        """Made once per IcebergCatalog: making one costs ~40 ms (a SQL catalog checks its
        tables) and a batch loads the table several times; each load still reads the catalog's
        current metadata location."""
        return self._make_py_catalog()

    def py_catalog(self) -> Any:
        """The pyiceberg catalog (made on first use, then kept)."""
        return self._py

    def _make_py_catalog(self) -> Any:
        from pyiceberg.catalog import load_catalog

        props = self.file_io_properties() | self.section.options
        kind = self.section.iceberg_catalog
        if kind == "jdbc":
            uri = self.jdbc_uri()
            if not uri.startswith("jdbc:sqlite:"):
                raise ValueError(f"--iceberg-catalog-uri {uri}: lakeinlet reads JDBC catalogs on "
                                 "SQLite; use rest or glue for a shared catalog")
            props |= {"type": "sql", "uri": "sqlite:///" + uri[len("jdbc:sqlite:"):],
                      "warehouse": self.warehouse()}
        else:
            props |= {"type": kind} | ({"uri": self.section.iceberg_catalog_uri}
                                       if self.section.iceberg_catalog_uri else {})
        return load_catalog(self.name, **props)

    def file_io_properties(self) -> dict[str, str]:
        """pyiceberg's S3 settings: the endpoint and region of configuration; credentials from
        the environment only when set there (else the default chain)."""
        props = {"s3.region": self.aws.region, "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
        if self.aws.endpoint_url:
            props |= {"s3.endpoint": self.aws.endpoint_url, "s3.force-virtual-addressing": "false"}
        for env, key in (("AWS_ACCESS_KEY_ID", "s3.access-key-id"),
                         ("AWS_SECRET_ACCESS_KEY", "s3.secret-access-key"),
                         ("AWS_SESSION_TOKEN", "s3.session-token")):
            if os.environ.get(env):
                props[key] = os.environ[env]
        return props


def _name(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", text) or "t"
