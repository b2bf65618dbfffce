"""ElasticMQ (an SQS server on the JVM) for the benchmarks, beside LocalStack: its jars resolved
from Maven Central once into the user's cache, started on 127.0.0.1 only."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

from _localstack import ServerProcess

VERSION = "1.7.1"
ARTIFACT = "org.elasticmq:elasticmq-server_2.13"
MAIN_CLASS = "org.elasticmq.server.Main"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # ignore HTTP_PROXY

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>lakeinlet.bench</groupId><artifactId>elasticmq-jars</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies><dependency>
    <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>
  </dependency></dependencies>
</project>
"""

# Every listener on 127.0.0.1; node-address is the host in the queue URLs it hands out.
CONFIG = """include classpath("application.conf")
node-address {{ protocol = "http", host = "127.0.0.1", port = {port}, context-path = "" }}
rest-sqs {{ enabled = true, bind-port = {port}, bind-hostname = "127.0.0.1", sqs-limits = strict }}
rest-stats {{ enabled = false }}
generate-node-address = false
"""


def cache_dir() -> Path:
    """$XDG_CACHE_HOME (else ~/.cache)/lakeinlet/bench/elasticmq-VERSION."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "lakeinlet" / "bench" / f"elasticmq-{VERSION}"


def ensure_jars(cache: Path | None = None) -> Path:
    """The folder of ElasticMQ's jars with its dependencies, resolved by Maven on first use.

    Raises:
        RuntimeError: no `mvn` or `java` on PATH, or the resolution failed.
    """
    cache = cache or cache_dir()
    lib, done = cache / "lib", cache / "lib.complete"
    if done.exists():
        return lib
    for tool in ("mvn", "java"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"ElasticMQ needs `{tool}` on PATH")
    cache.mkdir(parents=True, exist_ok=True)
    group, artifact = ARTIFACT.split(":")
    (cache / "pom.xml").write_text(POM.format(group=group, artifact=artifact, version=VERSION))
    print(f"resolving {ARTIFACT}:{VERSION} into {lib} (one-off)...", flush=True)
    out = subprocess.run(["mvn", "-q", "-B", "-f", str(cache / "pom.xml"),
                          "dependency:copy-dependencies", f"-DoutputDirectory={lib}",
                          "-DincludeScope=runtime"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"mvn could not resolve {ARTIFACT}:{VERSION}: {out.stdout[-1500:]}")
    done.write_text(VERSION)  # a resolution cut short is redone, never half used
    return lib


class ElasticMQ(ServerProcess):
    """ElasticMQ's SQS API on 127.0.0.1:`port`, as a context manager (started, waited for until it
    answers ListQueues, stopped on exit)."""

    def __init__(self, port: int, log: Path, lib: Path | None = None, heap_mb: int = 512) -> None:
        super().__init__(port, log)
        self.lib, self.heap_mb = lib, heap_mb

    def _ready(self) -> bool:
        request = urllib.request.Request(self.endpoint, b"Action=ListQueues", method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        try:
            with _NO_PROXY.open(request, timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def __enter__(self) -> ElasticMQ:
        lib = self.lib or ensure_jars()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        config = self.log.with_suffix(".conf")
        config.write_text(CONFIG.format(port=self.port))
        out = open(self.log, "ab")  # closed when the process ends
        self._proc = subprocess.Popen(
            ["java", f"-Xmx{self.heap_mb}m", f"-Dconfig.file={config}", "-cp", f"{lib}/*", MAIN_CLASS],
            stdout=out, stderr=out, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if self._proc.poll() is not None:
                    raise RuntimeError(f"ElasticMQ exited with {self._proc.returncode}; see {self.log}")
                if self._ready():
                    return self
                time.sleep(0.5)
            raise RuntimeError(f"ElasticMQ did not answer on {self.endpoint} in 120 s; see {self.log}")
        except BaseException:
            self.__exit__()
            raise
