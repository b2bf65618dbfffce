"""The Iceberg catalog as configuration: one Spark catalog (default name `lakeinlet`), and the same
catalog opened by pyiceberg for metadata queries (checkpoint, history, schema) without the JVM.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from lakeinlet import install_hint
from lakeinlet.aws import AwsSection
from lakeinlet.config import setting
from lakeinlet.errors import ConfigError
from lakeinlet.incremental.targets.iceberg.answers import catalog_tables_raced
from lakeinlet.redact import redact, redact_setting
from lakeinlet.storage import pyiceberg_options

CATALOG_TYPES = ("jdbc", "hadoop", "rest", "glue", "hive")
SHARED = ("use a catalog every loader reaches: --iceberg-catalog rest with --iceberg-catalog-uri "
          "http://…, --iceberg-catalog glue, or jdbc with a shared database (--iceberg-catalog-uri "
          "jdbc:postgresql://…)")
"""What the refusal of a driver-local catalog tells the user to use instead."""


@dataclass(frozen=True)
class IcebergSection:
    """Iceberg target (--target-format iceberg): the catalog that holds the table."""

    iceberg_catalog: str = setting(
        "jdbc", "Catalog type. `jdbc`: a JDBC catalog (atomic commits; a SQLite file serves one "
        "machine only, a shared database such as PostgreSQL serves a cluster); `hadoop`: "
        "path-based, local tables only; `rest`, `glue`, `hive` (a Hive Metastore, "
        "--iceberg-catalog-uri thrift://HOST:9083): shared catalogs for a cluster (give their "
        "settings with --iceberg-catalog-option).", choices=CATALOG_TYPES)
    iceberg_catalog_uri: str | None = setting(
        None, "jdbc: the JDBC URL (default for a local table: jdbc:sqlite:<table>.catalog.db "
        "beside it; an s3 table needs one). A jdbc:sqlite: file is refused on a Spark master that "
        "is not local[…] (or on loopback), and for a table on S3 other than an emulator on "
        "127.0.0.1/localhost. "
        "rest: the catalog's URL (http://host:port); hive: the metastore's (thrift://host:9083).",
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
        problems = [f"--iceberg-catalog-option: expected key=value, found {redact_setting(kv)!r}"
                    for kv in bad]
        if self.iceberg_catalog == "hive" and not (self.iceberg_catalog_uri or "").startswith("thrift://"):
            problems.append("--iceberg-catalog hive: give the metastore with --iceberg-catalog-uri "
                            f"thrift://HOST:PORT, found {self.iceberg_catalog_uri!r}")
        if self.iceberg_table and self.iceberg_table.count(".") != 1:
            problems.append(f"--iceberg-table: expected namespace.name, found {self.iceberg_table!r}")
        return problems

    @property
    def options(self) -> dict[str, str]:
        return dict(kv.split("=", 1) for kv in self.iceberg_catalog_option)


@dataclass(frozen=True)
class IcebergCatalog:
    """Where one target table lives: catalog settings, identifier and location.

    `jdbc` (default) keeps tables in a JDBC catalog: its commits are an atomic compare-and-swap of
    the metadata location. A SQLite file is one machine's: it is refused where a second machine
    may load the table (a cluster master, or real S3); `rest`, `glue` or a shared JDBC database
    serve those. `hadoop` is the path-based catalog (local tables only: it needs atomic renames).
    """

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

    def is_local(self) -> bool:
        return urlparse(self.location).scheme in ("", "file")

    def jdbc_uri(self) -> str:
        """The JDBC URL: as configured, else a SQLite file beside a local table.

        Raises:
            ConfigError: an s3 table and no URL (a file in the working folder would fork the table
                for every loader started elsewhere).
        """
        if self.section.iceberg_catalog_uri:
            return self.section.iceberg_catalog_uri
        if not self.is_local():
            raise ConfigError([f"--table {self.location}: an Iceberg table on S3 needs "
                               f"--iceberg-catalog-uri (no catalog file is made in the working folder); "
                               f"{SHARED}"])
        return f"jdbc:sqlite:{os.path.abspath(self._path() + '.catalog.db')}"

    def describe(self) -> str:
        """The catalog as a user names it (type and URI, its secrets masked), for messages."""
        kind = self.section.iceberg_catalog
        uri = self.jdbc_uri() if kind == "jdbc" else self.section.iceberg_catalog_uri
        return redact(f"{kind} {uri}") if uri else kind

    def warehouse(self) -> str:
        """The catalog's warehouse: the grandparent of a Hadoop table, else the table's parent."""
        up = 2 if self.section.iceberg_catalog == "hadoop" else 1
        path = self._path()
        for _ in range(up):
            path = posixpath.dirname(path)
        return path if not self.is_local() else "file://" + os.path.abspath(path)

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
        if kind in ("rest", "hive"):  # the catalog keeps metadata; Spark writes through its s3a settings
            conf[f"{pre}.io-impl"] = "org.apache.iceberg.hadoop.HadoopFileIO"
            if self.section.iceberg_catalog_uri:
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
        """Made once per IcebergCatalog: making one is not free (a SQL catalog checks its tables)
        and a batch loads the table several times; each load still reads the catalog's current
        metadata location."""
        return self._make_py_catalog()

    def py_catalog(self) -> Any:
        """The pyiceberg catalog (made on first use, then kept)."""
        return self._py

    def _make_py_catalog(self) -> Any:
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import NotInstalledError

        check_catalog_placement(self)
        props = self.file_io_properties() | self.section.options
        kind = self.section.iceberg_catalog
        if kind == "jdbc":
            props |= {"type": "sql", "uri": sqlalchemy_url(self.jdbc_uri(), self.section.options),
                      "warehouse": self.warehouse()}
        else:
            props |= {"type": kind} | ({"uri": self.section.iceberg_catalog_uri}
                                       if self.section.iceberg_catalog_uri else {})
        try:
            return load_catalog(self.name, **props)
        except NotInstalledError as exc:  # the database's driver (psycopg2) is missing
            where = self.jdbc_uri() if kind == "jdbc" else self.section.iceberg_catalog_uri or kind
            raise ConfigError([f"--iceberg-catalog {kind} {where}: pyiceberg cannot open it ({exc}); "
                               f"for PostgreSQL: {install_hint('postgres')}"]) from None
        except Exception as exc:
            if not catalog_tables_raced(exc):  # two loaders opened a new SQL catalog at once
                raise
            return load_catalog(self.name, **props)

    def file_io_properties(self) -> dict[str, str]:
        return pyiceberg_options(self.aws)


def check_catalog_placement(catalog: IcebergCatalog, master: str | None = None) -> None:
    """Refuse a SQLite catalog (one machine's file) where another machine may load the table.

    `master` is Spark's (`spark.sparkContext.master`, known once the session exists; None: not
    checked). A table on S3 is shared unless the endpoint is an emulator on loopback.

    Raises:
        ConfigError: the catalog is a SQLite file and the master is not local or the table is on S3.
    """
    if catalog.section.iceberg_catalog != "jdbc":
        return
    uri = catalog.jdbc_uri()  # raises for an s3 table without a catalog URI
    if not uri.startswith("jdbc:sqlite:"):
        return
    if master is not None and not local_master(master):
        raise ConfigError([f"--iceberg-catalog-uri {uri}: a SQLite catalog is one machine's file and "
                           f"Spark's master {master} is not local; {SHARED}"])
    endpoint = catalog.aws.endpoint_url
    if not catalog.is_local() and not loopback(endpoint):
        where = f"endpoint {endpoint}" if endpoint else "AWS S3"
        raise ConfigError([f"--iceberg-catalog-uri {uri}: a SQLite catalog is one machine's file and "
                           f"the table {catalog.location} is on S3 ({where}) that other machines "
                           f"load; {SHARED}"])


def local_master(master: str) -> bool:
    """True for Spark's one-machine masters: local, local[N], local[*], local[N,F], and a
    cluster whose master is on loopback (local-cluster[…], spark://127.0.0.1:…: every driver it
    can place runs on this machine)."""
    master = master.strip()
    if re.fullmatch(r"local(\[[0-9*]+(,[0-9]+)?\])?|local-cluster\[[0-9, ]+\]", master):
        return True
    return master.startswith("spark://") and all(loopback(f"spark://{hp}") for hp in master[8:].split(","))


def loopback(url: str | None) -> bool:
    """True when `url`'s host is this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlparse(url).hostname if url else None
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def sqlalchemy_url(jdbc: str, options: dict[str, str]) -> str:
    """The JDBC URL as pyiceberg's SQL catalog takes it: SQLite, or PostgreSQL (needs psycopg2;
    user and password from the `jdbc.user`/`jdbc.password` catalog options, as Iceberg's own)."""
    if jdbc.startswith("jdbc:sqlite:"):
        return "sqlite:///" + jdbc[len("jdbc:sqlite:"):]
    if jdbc.startswith("jdbc:postgresql://"):
        from urllib.parse import quote

        user, password = options.get("jdbc.user"), options.get("jdbc.password")
        auth = (quote(user, safe="") + (f":{quote(password, safe='')}" if password else "") + "@"
                if user else "")
        return f"postgresql+psycopg2://{auth}{jdbc[len('jdbc:postgresql://'):]}"
    raise ConfigError([f"--iceberg-catalog-uri {jdbc}: expected jdbc:sqlite:<file> or "
                       "jdbc:postgresql://host:port/db (the JDBC catalogs pyiceberg reads too)"])


def _name(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]", "_", text) or "t"
