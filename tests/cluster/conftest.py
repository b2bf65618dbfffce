"""The cluster tier's fixtures: one standalone cluster on 127.0.0.1 for the session, the wheel's venv,
a submission folder outside the checkout, and the table of figures printed at the end."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer
from tests.catalogs import RestCatalogServer
from tests.cluster.flow import ROOT, Flow, parse
from tests.cluster.standalone import StandaloneCluster
from tests.schedule import JVM_OPTIONS, add_section

RESULTS_FILE = "cluster-results.md"
REUSE_VENV = "LAKEINLET_CLUSTER_VENV"


IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="central"/>
  <resolvers><ibiblio name="central" m2compatible="true" root="https://repo1.maven.org/maven2/"/></resolvers>
</ivysettings>
"""


def ivy_dir() -> Path:
    """Ivy's cache for --packages, kept between runs (resolving from Maven Central is slow)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lakeinlet" / "ivy"


@dataclass(frozen=True)
class Row:
    target_format: str
    scenario: str
    expected: int
    found: int
    wall_s: float
    note: str = ""


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)
    pruned: int = 0
    """Bytes of executors' fetched files deleted after the tests (`StandaloneCluster.prune`)."""

    def table(self) -> list[str]:
        lines = ["| format | scenario | rows expected | rows found | wall time (s) | note |",
                 "| --- | --- | --- | --- | --- | --- |"]
        lines += [f"| {r.target_format} | {r.scenario} | {r.expected} | {r.found} | {r.wall_s:.1f} "
                  f"| {r.note} |" for r in self.rows]
        return lines + [f"{k}: {v:.1f} s" for k, v in self.figures.items()] + (
            [f"executors' fetched jars and venvs deleted after their tests: {self.pruned / 2**30:.1f} GiB"]
            if self.pruned else [])


@dataclass
class Submitter:
    """Runs the block's commands from `cwd` (outside the checkout) with only its variables set."""

    flow: Flow
    venv: Path
    cluster: StandaloneCluster
    endpoint: str
    cwd: Path
    conf_dir: Path

    def env(self, variables: dict[str, str]) -> dict[str, str]:
        java = shutil.which("java")
        path = ":".join(dict.fromkeys([str(Path(java).resolve().parent)] if java else []) | dict.fromkeys(
            ["/usr/local/bin", "/usr/bin", "/bin"]))
        base = {"PATH": path, "HOME": str(Path.home()), "LANG": "C.UTF-8", "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_CONF_DIR": str(self.conf_dir), "AWS_ENDPOINT_URL": self.endpoint,
                "VENV": str(self.venv), "MASTER": self.cluster.url} | TEST_CREDENTIALS
        java_home = {"JAVA_HOME": os.environ["JAVA_HOME"]} if "JAVA_HOME" in os.environ else {}
        return base | java_home | variables

    def run(self, script: str, variables: dict[str, str] | None = None, timeout: float = 600
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", script], cwd=self.cwd, env=self.env(variables or {}), text=True,
                              capture_output=True, timeout=timeout, start_new_session=True)

    def start(self, script: str, log: Path, variables: dict[str, str]) -> subprocess.Popen[bytes]:
        """Start `script` in its own process group (to be killed as a whole), output to `log`."""
        out = open(log, "wb")  # noqa: SIM115 (closed when the process is reaped by the caller)
        return subprocess.Popen(["bash", "-c", script], cwd=self.cwd, env=self.env(variables), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture(scope="session")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Results]:
    found = Results()
    yield found
    if found.rows or found.figures or found.pruned:
        path = tmp_path_factory.getbasetemp() / RESULTS_FILE
        path.write_text("\n".join(found.table()) + "\n")
        add_section("cluster tier: rows and wall times", [*found.table(), f"(written to {path})"])


@pytest.fixture(scope="session")
def standalone(tmp_path_factory: pytest.TempPathFactory, results: Results) -> Iterator[StandaloneCluster]:
    t0 = time.monotonic()
    cluster = StandaloneCluster(tmp_path_factory.mktemp("standalone"), java_options=JVM_OPTIONS).start()
    results.figures["cluster start (master + 2 workers registered)"] = time.monotonic() - t0
    try:
        yield cluster
    finally:
        cluster.stop()
        left = cluster.executors()
        results.pruned += cluster.prune()
        assert not left, f"executors left running after the cluster stopped: {left}"


@pytest.fixture(autouse=True)
def _prune_executors(request: pytest.FixtureRequest, results: Results) -> Iterator[None]:
    """After each test on the cluster, its applications' fetched jars and venv go (their logs stay):
    every executor fetches its own copy, and the tier kept 12 GB of them until the session ended."""
    yield
    if "standalone" in request.fixturenames:
        cluster: StandaloneCluster = request.getfixturevalue("standalone")
        results.pruned += cluster.prune()


@pytest.fixture(scope="session")
def cluster_venv(request: pytest.FixtureRequest) -> Path:
    """The installed wheel's venv (`wheel_venv`); $LAKEINLET_CLUSTER_VENV reuses one a previous
    session made, to iterate on the tier without rebuilding (never in `make`)."""
    if os.environ.get(REUSE_VENV):
        return Path(os.environ[REUSE_VENV])
    return Path(request.getfixturevalue("wheel_venv"))


@pytest.fixture(scope="session")
def submitter(cluster_venv: Path, standalone: StandaloneCluster, moto_server: MotoServer,
              tmp_path_factory: pytest.TempPathFactory) -> Submitter:
    conf_dir = tmp_path_factory.mktemp("spark-conf")
    # Site settings kept in spark-defaults.conf, not on the documented command lines. Spark's own
    # resolver chain puts ~/.m2 first, where Maven leaves POMs without their jars (`make jars`
    # fetches with -DexcludeTransitive): Ivy takes the POM and fails on the jar, so only Maven
    # Central is named (measured: `download failed: commons-codec#commons-codec;1.16.1!commons-codec.jar`).
    (conf_dir / "ivysettings.xml").write_text(IVY_SETTINGS)
    (conf_dir / "spark-defaults.conf").write_text(
        f"spark.jars.ivy {ivy_dir()}\nspark.jars.ivySettings {conf_dir / 'ivysettings.xml'}\n"
        f"spark.driver.defaultJavaOptions {JVM_OPTIONS}\nspark.executor.defaultJavaOptions {JVM_OPTIONS}\n")
    return Submitter(parse(), cluster_venv, standalone, moto_server.endpoint,
                     tmp_path_factory.mktemp("submit"), conf_dir)


@pytest.fixture(scope="session")
def rest_catalog(moto_server: MotoServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Iceberg's REST catalog test server (tests/catalogs.py) for the Iceberg loads: a SQLite
    catalog is refused on a cluster master, so the tier uses the catalog kind a cluster would."""
    jars = Path(os.environ.get("LAKEINLET_JARS") or ROOT / ".jars")
    with RestCatalogServer(tmp_path_factory.mktemp("rest-catalog"), moto_server.endpoint, jars) as server:
        yield server.endpoint


@pytest.fixture(scope="session")
def packed_env(submitter: Submitter, results: Results) -> Path:
    """The block's setup lines run once: venv-pack into the wheel's venv, the venv packed."""
    t0 = time.monotonic()
    done = submitter.run(submitter.flow.script(*submitter.flow.setup))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    archive = submitter.cwd / "lakeinlet-env.tar.gz"
    results.figures[f"venv-pack ({archive.stat().st_size / 2**20:.0f} MiB archive)"] = time.monotonic() - t0
    return archive
