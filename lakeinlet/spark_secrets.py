"""Secrets and Spark's JVM: a setting that carries one is never on the JVM's command line (it is set
once the JVM runs), and Spark's redaction regex covers the catalogs' secrets too."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.redact import carries_secret

REDACTION_KEY = "spark.redaction.regex"
REDACTION = r"(?i:secret|password|token|access[.]key|credential|//[^/\s]*:[^/\s]*@)"
"""What Spark redacts (a setting whose key or value matches: UI, event logs, `SET`): its own default
words, Iceberg's REST `credential`, and a value holding a URI with a password (a catalog's `uri`)."""


def redaction_regex(*theirs: str | None) -> str:
    """Spark's redaction regex: the user's own (spark-submit's, --spark-conf's), still in force,
    with `REDACTION` added."""
    mine = [t for t in dict.fromkeys(theirs) if t]
    return "|".join(mine if any(REDACTION in t for t in mine) else [*mine, REDACTION])


def launch_settings(conf: Mapping[str, str], submitted: bool) -> tuple[dict[str, str], dict[str, str]]:
    """`conf` split into (settings the session is built with, settings set once it runs).

    Outside spark-submit PySpark starts the JVM with every build setting on its command line
    (`spark-submit --conf key=value`, readable by any user in `ps` and /proc/<pid>/cmdline): a
    setting that carries a secret (`lakeinlet.redact.carries_secret`: a catalog URI with a password,
    `jdbc.password`, a REST `credential`, an s3a key from --spark-conf) is held back and set in the
    running JVM. Under spark-submit the JVM already runs: nothing is held.
    """
    if submitted:
        return dict(conf), {}
    held = {k: v for k, v in conf.items() if carries_secret(k, v)}
    return {k: v for k, v in conf.items() if k not in held}, held


def set_running(session: Any, held: Mapping[str, str]) -> None:
    """Set `held` settings in the running session: `spark.hadoop.*` in the Hadoop configuration every
    later filesystem and task is made from, the others as session settings.

    Raises:
        TerminalError: Spark reads that setting only at start-up (named, its value not shown).
    """
    for key, value in held.items():
        if key.startswith("spark.hadoop."):
            lakejvm.hadoop_conf(session).set(key[len("spark.hadoop."):], value)
            continue
        try:
            session.conf.set(key, value)
        except Exception as exc:  # py4j wraps Spark's "cannot modify a static config"
            raise TerminalError(
                f"--spark-conf {key}: holds a secret and Spark reads it only at start-up; lakeinlet "
                "never puts a secret on the JVM's command line: set it in spark-defaults.conf "
                f"(SPARK_CONF_DIR) or run under spark-submit ({type(exc).__name__})") from None
