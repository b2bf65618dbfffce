"""A catalog several drivers share, for tests: Iceberg's REST catalog test server (iceberg-open-api's
test fixtures, from Maven Central into a test-only jar folder), on 127.0.0.1 with a SQLite store.

Whoever starts a server stops it (`with RestCatalogServer(...) as server:`); its log stays in `root`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from xml.sax.saxutils import escape

from lakeinlet import jars as jarlib
from lakeinlet.spark import s3a_emulator_conf

ICEBERG = "1.10.0"
REST_CATALOG = (
    f"org.apache.iceberg:iceberg-open-api:{ICEBERG}:test-fixtures",  # RESTCatalogServer
    f"org.apache.iceberg:iceberg-core:{ICEBERG}",
    f"org.apache.iceberg:iceberg-core:{ICEBERG}:tests",  # RESTCatalogAdapter, RESTCatalogServlet
    "org.eclipse.jetty:jetty-servlet:11.0.25",  # jakarta servlets, as the fixture's server
    "org.xerial:sqlite-jdbc:3.54.1.0",  # the backend JDBC catalog's store
    "org.apache.hadoop:hadoop-client-api:3.3.4",  # HadoopFileIO; s3a comes from the `s3a` group
    "org.apache.hadoop:hadoop-client-runtime:3.3.4",
    "org.slf4j:slf4j-simple:2.0.17",
)
"""The server and its transitive dependencies (the test-fixtures artifact declares none)."""
GROUP = "rest-catalog"
"""Folder under the jars folder (test-only: no loader run needs it)."""
LAUNCHER = Path(__file__).with_name("rest_catalog_server.java")


def rest_catalog_jars(dest: Path | None = None, mvn: str | None = None) -> list[Path]:
    """The server's jars under `<jars>/rest-catalog/`, fetched with Maven (transitives included)
    the first time; a folder without its `.complete` marker is fetched again.

    Raises:
        jarlib.JarsUnavailable: no Maven, or Maven could not resolve the coordinates.
    """
    folder = (dest or jarlib.default_dir()) / GROUP
    if not (folder / ".complete").is_file():
        _fetch(folder, mvn or shutil.which("mvn"))
    return sorted(folder.glob("*.jar"))


def _fetch(folder: Path, mvn: str | None) -> None:
    if not mvn:
        raise jarlib.JarsUnavailable("Maven (mvn) is needed to fetch the REST catalog server's jars")
    deps = "".join(_dependency(c) for c in REST_CATALOG)
    pom = ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
           "<groupId>lakeinlet</groupId><artifactId>rest-catalog</artifactId><version>0</version>"
           f"<packaging>pom</packaging><dependencies>{deps}</dependencies></project>")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pom.xml").write_text(pom)
        cmd = [mvn, "-B", "-q", "-f", f"{tmp}/pom.xml", f"{jarlib.DEPENDENCY_PLUGIN}:copy-dependencies",
               f"-DoutputDirectory={tmp}/out", "-DincludeScope=runtime"]  # transitives included
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            said = " ".join((done.stdout + done.stderr).split())[-600:]
            raise jarlib.JarsUnavailable(f"Maven could not fetch the REST catalog server: {said}")
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(Path(tmp) / "out", folder)
    (folder / ".complete").write_text("\n".join(REST_CATALOG) + "\n")


def _dependency(coordinate: str) -> str:
    """`group:artifact:version[:classifier]` as a pom dependency."""
    group, artifact, version, *classifier = coordinate.split(":")
    extra = f"<classifier>{classifier[0]}</classifier>" if classifier else ""
    return (f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version>{extra}</dependency>")


def core_site(s3_endpoint: str | None) -> str:
    """Hadoop settings of the server's HadoopFileIO (it writes each commit's metadata.json): s3a
    as lakeinlet's Spark session sets it against an emulator."""
    conf = s3a_emulator_conf(s3_endpoint) if s3_endpoint else {}
    props = "".join(f"<property><name>{escape(k[len('spark.hadoop.'):])}</name><value>{escape(v)}</value>"
                    "</property>" for k, v in conf.items())
    return f'<?xml version="1.0"?><configuration>{props}</configuration>'


class RestCatalogServer:
    """Iceberg's REST catalog test server: a JDBC catalog on `<root>/catalog.db` behind HTTP on
    127.0.0.1 (a free port), writing metadata through s3a at `s3_endpoint` or to local paths."""

    def __init__(self, root: Path, s3_endpoint: str | None = None, jars: Path | None = None) -> None:
        self.root, self.s3_endpoint, self.jars = root, s3_endpoint, jars
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def classpath(self) -> str:
        conf = self.root / "conf"  # core-site.xml is read from the classpath
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "core-site.xml").write_text(core_site(self.s3_endpoint))
        dest = self.jars or jarlib.default_dir()
        # the 3.5 line's s3a on every line: it matches the Hadoop 3.3.4 client the server's jars bring
        s3a = jarlib.fetch(dest, "s3a", line="3.5") if self.s3_endpoint else []
        # s3a first: iceberg-core's test jar carries a stand-in S3ABlockOutputStream of its own
        return os.pathsep.join(str(p) for p in [conf, *s3a, *rest_catalog_jars(dest)])

    def start(self, timeout: float = 120.0) -> RestCatalogServer:
        """Start the server and wait until it listens.

        Raises:
            RuntimeError: it exited or did not listen within `timeout` (its log is named).
        """
        out, log = self.root / "server.out", self.root / "server.log"
        env = os.environ | {"CATALOG_URI": f"jdbc:sqlite:{self.root / 'catalog.db'}",
                            "CATALOG_WAREHOUSE": (self.root / "warehouse").as_uri()}
        java = shutil.which("java", path=os.path.join(os.environ["JAVA_HOME"], "bin")) \
            if os.environ.get("JAVA_HOME") else shutil.which("java")
        with out.open("wb") as stdout, log.open("wb") as stderr:
            self.proc = subprocess.Popen([java or "java", "-Xmx512m", "-cp", self.classpath(),
                                          str(LAUNCHER), "0"], stdout=stdout, stderr=stderr, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            said = out.read_text().split()
            if "listening" in said:
                self.port = int(said[said.index("listening") + 2])
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the REST catalog server did not start within {timeout:.0f} s; see {log}")

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __enter__(self) -> RestCatalogServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
