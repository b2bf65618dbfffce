"""A standalone Hive Metastore on a loopback port, for tests and local trials: the metastore classes
pyspark ships (Hive 2.3), an embedded Derby database and a warehouse in one folder.

Hive 2.3's own `HiveMetaStore` main binds every interface (it has no bind-host setting), so a
small launcher (`_LAUNCHER`, run as a Java single-file program) serves the same handler on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from lakeinlet.dev.emulator import free_port, stop_process

# Hive 2.3's startMetaStore without SASL, framed transport or setugi, on a loopback socket.
_LAUNCHER = """
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TSetIpAddressProcessor;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;

public class MetastoreOnLoopback {
  public static void main(String[] args) throws Exception {
    HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);  // settings from -D properties
    try {  // the lock tables Iceberg's Hive catalog commits through (Hive creates them only in tests)
      TxnDbUtil.prepDb(conf);
    } catch (Exception e) {
      System.err.println("transaction tables not created (there already?): " + e);
    }
    IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(
        new HiveMetaStore.HMSHandler("lakeinlet metastore", conf, false), conf);
    int port = Integer.parseInt(args[0]);
    TServerSocket socket = new TServerSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    TThreadPoolServer.Args server = new TThreadPoolServer.Args(socket)
        .processor(new TSetIpAddressProcessor<>(handler)).protocolFactory(new TBinaryProtocol.Factory());
    new TThreadPoolServer(server).serve();
  }
}
"""


class HiveMetastore:
    """A Hive Metastore in its own JVM on 127.0.0.1 (a free port), as a context manager.

    Its Derby database, warehouse and log live in `root` (default: a temporary folder, removed
    on stop; a given one is kept, log included)."""

    def __init__(self, root: Path | None = None, port: int = 0) -> None:
        self.port = port or free_port()
        self._owned = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix="lakeinlet-metastore-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def uris(self) -> str:
        """The value of `hive.metastore.uris` that reaches this metastore."""
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.root / "metastore.log"

    def command(self) -> list[str]:
        """The JVM's command line (also what a reader can run by hand)."""
        spec = importlib.util.find_spec("pyspark")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("the metastore runs on pyspark's jars: pyspark is not installed")
        jars = Path(spec.submodule_search_locations[0]) / "jars"
        home = os.environ.get("JAVA_HOME")
        java = shutil.which("java", path=os.path.join(home, "bin")) if home else shutil.which("java")
        derby = f"jdbc:derby:;databaseName={self.root / 'metastore_db'};create=true"
        settings = {  # read by HiveConf from the system properties
            "javax.jdo.option.ConnectionURL": derby,
            "datanucleus.schema.autoCreateAll": "true",  # an empty Derby database gets Hive's schema
            "hive.metastore.schema.verification": "false",  # ... and no version row to check
            "hive.metastore.warehouse.dir": str(self.root / "warehouse"),
            "derby.stream.error.file": str(self.root / "derby.log"),
        }
        return [java or "java", "-Xmx512m", *(f"-D{k}={v}" for k, v in settings.items()),
                "-cp", f"{jars}/*", str(self.root / "MetastoreOnLoopback.java"), str(self.port)]

    def start(self, timeout: float = 90.0) -> HiveMetastore:
        """Start the metastore and wait until it accepts connections.

        Raises:
            RuntimeError: no pyspark, or the metastore exited or did not listen within `timeout`
                seconds (the end of its log is quoted).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "MetastoreOnLoopback.java").write_text(_LAUNCHER)
        command = self.command()
        with self.log.open("ab") as out:
            self._proc = subprocess.Popen(command, cwd=self.root, stdout=out, stderr=out,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # waiting for the JVM to listen: not an error retry
            if self._proc.poll() is not None:
                raise self._failed(f"exited with code {self._proc.returncode}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            time.sleep(0.2)
        raise self._failed(f"did not listen on 127.0.0.1:{self.port} in {timeout:.0f} s")

    def stop(self) -> None:
        stop_process(self._proc)
        self._proc = None
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def _failed(self, what: str) -> RuntimeError:
        tail = " ".join(self.log.read_text(errors="replace").split()[-60:]) if self.log.exists() else ""
        self.stop()
        return RuntimeError(f"the Hive metastore {what}: {tail}")

    def __enter__(self) -> HiveMetastore:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
