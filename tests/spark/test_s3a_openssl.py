"""s3a's OpenSSL binding is optional: the socket factory s3a uses by default (`default_jsse`) works
without wildfly-openssl on the classpath, and the `s3a-openssl` group's wildfly binds OpenSSL (the
machine's libssl, OpenSSL 3 included) when asked. A small Java program against this Spark line's own
Hadoop jars: no session needed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from lakeinlet import jars as jarlib
from tests.spark.conftest import JARS

pytestmark = [pytest.mark.spark]

PROBE = """
import org.apache.hadoop.security.ssl.DelegatingSSLSocketFactory;
public class Probe {
  public static void main(String[] args) throws Exception {
    DelegatingSSLSocketFactory.initializeDefaultFactory(
        DelegatingSSLSocketFactory.SSLChannelMode.valueOf(args[0]));
    DelegatingSSLSocketFactory f = DelegatingSSLSocketFactory.getDefaultFactory();
    System.out.println(f.getProviderName() + " " + f.getDefaultCipherSuites().length);
  }
}
"""


def _probe(tmp_path: Path, mode: str, extra: list[Path]) -> subprocess.CompletedProcess[str]:
    import pyspark

    source = tmp_path / "Probe.java"
    source.write_text(PROBE)
    spark_jars = Path(pyspark.__file__).parent / "jars" / "*"
    classpath = ":".join([str(spark_jars), *map(str, extra)])
    return subprocess.run([shutil.which("java") or "java", "-cp", classpath, str(source), mode],
                          capture_output=True, text=True, timeout=300)


def test_s3a_tls_needs_no_wildfly_and_the_optional_group_binds_openssl(tmp_path: Path) -> None:
    s3a = jarlib.group_jars(Path(JARS), "s3a")
    assert s3a and not [p for p in s3a if "wildfly" in p.name]  # the default group leaves it out
    jsse = _probe(tmp_path, "Default_JSSE", s3a)
    assert jsse.returncode == 0, jsse.stderr[-2000:]
    assert jsse.stdout.split()[0].startswith("SunJSSE")  # the JDK's TLS
    wildfly = jarlib.fetch(Path(JARS), "s3a-openssl")
    openssl = _probe(tmp_path, "OpenSSL", [*s3a, *wildfly])
    assert openssl.returncode == 0, openssl.stderr[-2000:]
    assert openssl.stdout.split()[0].startswith("openssl")
