"""Where an Iceberg catalog may live: no catalog file in the working folder, a SQLite catalog only
where one machine loads the table, and a location that already holds a table never created over."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental.targets.iceberg import creation as iceberg_target
from lakeinlet.incremental.targets.iceberg.catalog import (
    IcebergCatalog,
    IcebergSection,
    check_catalog_placement,
    local_master,
    sqlalchemy_url,
)
from lakeinlet.incremental.targets.iceberg.creation import metadata_files
from lakeinlet.incremental.targets.iceberg.outcome_files import OutcomeFiles
from lakeinlet.incremental.targets.iceberg.target import IcebergTarget

pytestmark = pytest.mark.unit
EMULATOR = AwsSection(endpoint_url="http://127.0.0.1:5000")


def catalog(location: str, aws: AwsSection = EMULATOR, **section: str) -> IcebergCatalog:
    return IcebergCatalog(IcebergSection(**section), location, aws)  # type: ignore[arg-type]


def test_an_s3_table_without_a_catalog_uri_is_refused_even_on_an_emulator(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"needs --iceberg-catalog-uri.*--iceberg-catalog rest"):
        check_catalog_placement(catalog("s3a://lake/orders"), "local[2]")
    with pytest.raises(ConfigError):
        catalog("s3a://lake/orders").spark_conf()
    assert not (tmp_path / ".lakeinlet").exists()


def test_a_local_table_keeps_its_catalog_file_beside_it(tmp_path: Path) -> None:
    c = catalog(str(tmp_path / "orders"))
    assert c.jdbc_uri() == f"jdbc:sqlite:{tmp_path / 'orders'}.catalog.db"
    check_catalog_placement(c, "local[*]")
    with pytest.raises(ConfigError, match=r"master yarn is not local.*jdbc:postgresql"):
        check_catalog_placement(c, "yarn")


@pytest.mark.parametrize(("endpoint", "allowed"), [
    ("http://127.0.0.1:5000", True), ("http://localhost:9000", True), ("http://[::1]:5000", True),
    ("http://10.0.0.5:9000", False), ("https://s3.eu-west-1.amazonaws.com", False), (None, False)])
def test_a_sqlite_catalog_for_an_s3_table_only_on_a_loopback_emulator(endpoint: str | None,
                                                                     allowed: bool) -> None:
    c = catalog("s3a://lake/orders", AwsSection(endpoint_url=endpoint),
                iceberg_catalog_uri="jdbc:sqlite:/tmp/cat.db")
    if allowed:
        check_catalog_placement(c, "local[1]")
        check_catalog_placement(c)
    else:
        with pytest.raises(ConfigError, match=r"is on S3.*other machines load"):
            check_catalog_placement(c)


@pytest.mark.parametrize("section", [
    {"iceberg_catalog": "rest", "iceberg_catalog_uri": "http://catalog:8181"},
    {"iceberg_catalog": "glue"},
    {"iceberg_catalog_uri": "jdbc:postgresql://db:5432/iceberg"}])
def test_shared_catalogs_pass_anywhere(section: dict[str, str]) -> None:
    check_catalog_placement(catalog("s3a://lake/orders", AwsSection(), **section), "yarn")


@pytest.mark.parametrize(("master", "local"), [
    ("local", True), ("local[4]", True), ("local[*]", True), ("local[2,3]", True),
    ("local-cluster[2,1,1024]", True), ("spark://127.0.0.1:7077", True), ("spark://master:7077", False),
    ("yarn", False), ("k8s://https://api:6443", False), ("localhost", False)])
def test_local_masters(master: str, local: bool) -> None:
    assert local_master(master) is local


def test_jdbc_urls_as_pyiceberg_takes_them() -> None:
    assert sqlalchemy_url("jdbc:sqlite:/x/c.db", {}) == "sqlite:////x/c.db"
    assert sqlalchemy_url("jdbc:postgresql://db:5432/ice", {"jdbc.user": "u", "jdbc.password": "p@s"}) \
        == "postgresql+psycopg2://u:p%40s@db:5432/ice"
    with pytest.raises(ConfigError, match="expected jdbc:sqlite"):
        sqlalchemy_url("jdbc:mysql://db/ice", {})


def test_rest_catalog_writes_files_through_hadoop_io() -> None:
    conf = catalog("s3a://lake/orders", iceberg_catalog="rest",
                   iceberg_catalog_uri="http://127.0.0.1:8181").spark_conf()
    assert conf["spark.sql.catalog.lakeinlet.uri"] == "http://127.0.0.1:8181"
    assert conf["spark.sql.catalog.lakeinlet.io-impl"].endswith("HadoopFileIO")


def test_a_location_holding_a_table_another_catalog_knows_is_not_created_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iceberg_target, "FOREIGN_WAIT", (0.0,))
    table = tmp_path / "orders"
    c = catalog(str(table), iceberg_catalog_uri=f"jdbc:sqlite:{tmp_path / 'second.db'}")
    target = IcebergTarget(c, "app", [], lambda: None, OutcomeFiles(str(tmp_path / "out"), EMULATOR))
    assert target._foreign_or_none() is None  # nothing there yet: the table may be created
    (table / "metadata").mkdir(parents=True)
    (table / "metadata" / "00000-a.metadata.json").write_text("{}")
    assert metadata_files(str(table), c) == [str(table / "metadata" / "00000-a.metadata.json")]
    with pytest.raises(TerminalError, match=rf"{table} already holds an Iceberg table .* does not know"):
        target._foreign_or_none()


def test_a_catalog_initialised_by_another_loader_at_the_same_moment_is_not_a_crash(
        tmp_path: Path) -> None:
    """Two loaders on a new table: the second to create the JDBC catalog's own tables is refused
    (SQLite: "table iceberg_tables already exists"); its statement is tried once more."""
    class Racing:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def sql(self, text: str) -> None:
            self.calls.append(text)
            if len(self.calls) == 1:
                raise RuntimeError("[SQLITE_ERROR] SQL error or missing database (table iceberg_tables "
                                   "already exists)")

    catalog = IcebergCatalog(IcebergSection(), str(tmp_path / "orders"), AwsSection())
    spark = Racing()
    IcebergTarget(catalog, "app", (), lambda: spark, None)._namespace(spark)  # type: ignore[arg-type]
    assert spark.calls == ["CREATE NAMESPACE IF NOT EXISTS lakeinlet.lakeinlet"] * 2


def test_a_sql_catalog_another_loader_creates_at_the_same_moment_is_opened_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced by two loader processes on a new table (one stopped with "unexpected error"):
    pyiceberg's SQL catalog found its tables missing and lost the CREATE TABLE race."""
    import pyiceberg.catalog

    real, calls = pyiceberg.catalog.load_catalog, []

    def racing(name: str, **props: str) -> object:
        calls.append(name)
        if len(calls) == 1:
            raise RuntimeError("(sqlite3.OperationalError) table iceberg_tables already exists")
        return real(name, **props)

    monkeypatch.setattr(pyiceberg.catalog, "load_catalog", racing)
    catalog = IcebergCatalog(IcebergSection(), str(tmp_path / "orders"), AwsSection())
    assert catalog.py_catalog() is not None and len(calls) == 2
    monkeypatch.setattr(pyiceberg.catalog, "load_catalog", lambda *_, **__: (_ for _ in ()).throw(
        RuntimeError("disk I/O error")))
    with pytest.raises(RuntimeError, match="disk I/O error"):  # anything else is not retried
        IcebergCatalog(IcebergSection(), str(tmp_path / "other"), AwsSection()).py_catalog()


def test_a_postgresql_catalog_without_its_driver_names_the_extra_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from lakeinlet.aws import AwsSection
    from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog, IcebergSection

    monkeypatch.setitem(sys.modules, "psycopg2", None)  # not installed (the `postgres` extra brings it)
    section = IcebergSection(iceberg_catalog_uri="jdbc:postgresql://127.0.0.1:1/iceberg",
                             iceberg_catalog_option=("jdbc.user=alice", "jdbc.password=LEAKCANARY-pg"))
    with pytest.raises(ConfigError, match=r"pip install 'dist/lakeinlet-[^']*\.whl\[postgres\]'") as err:
        IcebergCatalog(section, "s3a://lake/t", AwsSection(endpoint_url="http://127.0.0.1:1")).py_catalog()
    assert "LEAKCANARY" not in str(err.value)
