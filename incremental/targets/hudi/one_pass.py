"""Fast path `one-pass` for Hudi: a batch's rows go to Hudi's Spark writer as they are read, and a
pre-commit hook checks the write before Hudi completes its instant (`write`). A Spark without the JVM
classes it calls reads and checks the batch first, with one warning for the process (`usable`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from lakeinlet import fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.read.file_index import lacks
from lakeinlet.logs import event

PARAMS = "org.apache.hudi.HoodieSparkSqlWriter$StreamingWriteParams"
"""Hudi's writer takes its pre-commit function (`extraPreCommitFn`) in these."""
CASE_INSENSITIVE = "org.apache.spark.sql.catalyst.util.CaseInsensitiveMap$"
"""How Spark hands a datasource its options (keys looked up case-insensitively, listed lower-cased)."""
LISTENER = "org.apache.spark.sql.ObservationListener"
"""What completes a Dataset's `Observation` once a query that ran it succeeds (Spark 3.5)."""
log = logging.getLogger(__name__)
_lacking: dict[str, str] = {}
"""`hudi` → why this process's Spark cannot take the one-pass write (set once, with a warning)."""
_usable: set[str] = set()
"""`hudi` once this process's Spark was found to have what the one-pass write calls."""


class Rejected(Exception):
    """The pre-commit check refused the write: Hudi left its instant inflight (`roll_back`)."""


@dataclass(frozen=True)
class Written:
    """What Hudi's commit metadata says was written, before the instant completes."""

    records: int
    errors: int

    def problem(self, promised: int | None) -> str | None:
        """Why the write must not be committed (None: commit it); `promised`: the rows every
        object's footer holds, when each row read is one row written (a keyless insert)."""
        if self.errors:
            return f"Hudi failed to write {self.errors} rows"
        if promised is not None and self.records != promised:
            return f"Hudi wrote {self.records} rows, the footers promise {promised}"
        return None


def usable(spark: Any) -> bool:
    """Whether the one-pass write is on and this Spark has the classes it calls (else the batch
    is read and checked before an ordinary datasource write, said once per process)."""
    if not fast_paths.enabled("one-pass") or "hudi" in _lacking:
        return False
    if "hudi" in _usable:
        return True
    jvm = lakejvm.of(spark)
    missing = [c for c in (PARAMS, LISTENER) if not lakejvm.loadable(jvm, c)]
    if missing:
        fell_back(TypeError(f"not on this Spark's classpath: {', '.join(missing)}"))
        return False
    _usable.add("hudi")
    return True


def fell_back(exc: BaseException) -> None:
    """Log that Hudi writes take the checked read: once per process for a Spark that lacks what
    the one-pass write calls (it then stays off), each time for any other failure."""
    from pyspark import __version__ as spark_version

    if lacks(exc):
        if "hudi" in _lacking:
            return
        _lacking["hudi"] = str(exc)[:300]
        event(log, "hudi_one_pass_fallback", level=logging.WARNING, spark=spark_version,
              reason=_lacking["hudi"], until="the process ends")
    else:
        event(log, "hudi_one_pass_fallback", level=logging.WARNING, reason=str(exc)[:300])


def rows(spark: Any, df: Any) -> Any:
    """`df`'s rows as a DataFrame that runs `df`'s own query (its executed plan, not a copy of it):
    what `df` observes (`Dataset.observe`) is counted by a write of these rows, which Hudi's writer
    (a query of its own) would not do for `df` itself."""
    from pyspark.sql import DataFrame

    jdf = lakejvm.frame(df)
    js = lakejvm.session(spark)
    return DataFrame(js.internalCreateDataFrame(jdf.queryExecution().toRdd(), jdf.schema(), False), spark)


def observed(spark: Any, df: Any) -> None:
    """Complete `df`'s observations with what its query counted: Spark does so after an action on
    `df`, and a write of `rows(df)` is none.

    Raises:
        TerminalError: no observation is waiting (reading one would then wait forever).
    """
    qe = lakejvm.frame(df).queryExecution()
    listeners = [x for x in lakejvm.session(spark).listenerManager().listListeners()
                 if x.getClass().getName() == LISTENER]
    if not listeners:
        raise TerminalError("the one-pass write's row counts were not observed: please report this")
    for listener in listeners:
        listener.onSuccess("hudi", qe, 0)


class _PreCommit:
    """Hudi's pre-commit function (a java.util.function.BiConsumer of its meta client and the
    commit's metadata), called once the rows are written, before the instant completes: `check`
    raising keeps it from completing, and is kept to be raised again in Python."""

    def __init__(self, check: Callable[[Written], None]) -> None:
        self.check, self.failure = check, None
        self.called = False

    def accept(self, meta_client: Any, metadata: Any) -> None:
        self.called = True
        try:
            self.check(Written(int(metadata.fetchTotalRecordsWritten()),
                               int(metadata.fetchTotalWriteErrors())))
        except BaseException as exc:
            self.failure = exc  # type: ignore[assignment]
            raise

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.BiConsumer"]


class _Quiet(logging.Filter):
    """Drops py4j's error log of the exception the hook raised (raised again in Python, where the
    caller handles it)."""

    def __init__(self, hook: _PreCommit) -> None:
        super().__init__()
        self.hook = hook

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and record.exc_info[1] is not None
                    and record.exc_info[1] is self.hook.failure)


def write(spark: Any, data: Any, options: Mapping[str, str], path: str,
          check: Callable[[Written], None]) -> None:
    """Append `data` to the Hudi table at `path` through Hudi's writer, as `df.write.format("hudi")`
    would (the same options, case-insensitive as Spark hands them over), with `check` run before
    Hudi completes the instant (inside its commit). Hudi has started the instant and written the
    files by then; a check that raises leaves the instant inflight, and Hudi's next writer (or
    `roll_back`) rolls it back, as after a writer killed mid-commit.

    Raises:
        whatever `check` raised; TerminalError: Hudi reported a failed write.
    """
    jvm, js = lakejvm.of(spark), lakejvm.session(spark)
    lakejvm.start_callback_server(spark)
    hook = _PreCommit(check)
    some, none = jvm.scala.Option.apply, jvm.scala.Option.empty()
    params = getattr(jvm.org.apache.hudi, PARAMS.rsplit(".", 1)[1])(none, none, none, some(hook))
    opts = lakejvm.static_field(spark, CASE_INSENSITIVE, "MODULE$").apply(
        jvm.PythonUtils.toScalaMap({**options, "path": path}))
    writer = jvm.org.apache.hudi.HoodieSparkSqlWriter
    quiet, py4j_log = _Quiet(hook), logging.getLogger("py4j.clientserver")
    py4j_log.addFilter(quiet)
    try:
        result = writer.write(js.sqlContext(), jvm.org.apache.spark.sql.SaveMode.Append, opts,
                              lakejvm.frame(data), some(params), none, none)
    except Exception:
        if hook.failure is not None:
            raise hook.failure from None
        raise
    finally:
        py4j_log.removeFilter(quiet)
        writer.cleanup()
    if not result._1():
        raise TerminalError(f"{path}: Hudi's writer reported a failed write (see its log)")
    if not hook.called:
        raise TerminalError(f"{path}: Hudi completed its write without its pre-commit check")


def roll_back(spark: Any, path: str, table: str, options: Mapping[str, str]) -> None:
    """Roll back the table's failed (inflight) writes now, as Hudi's next writer would: the caller
    holds the writer lease, so every inflight commit is a failed one."""
    jvm = lakejvm.of(spark)
    hudi = jvm.org.apache.hudi
    spark_context = lakejvm.session(spark).sparkContext()
    jsc = jvm.org.apache.spark.api.java.JavaSparkContext.fromSparkContext(spark_context)
    conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(lakejvm.hadoop_conf(spark))
    meta_client = hudi.common.table.HoodieTableMetaClient.builder().setConf(conf).setBasePath(path).build()
    params = jvm.java.util.HashMap()
    for k, v in options.items():
        params.put(k, v)
    client = hudi.DataSourceUtils.createHoodieClient(jsc, None, path, table, params)
    try:
        client.rollbackFailedWrites(meta_client)
    finally:
        client.close()
