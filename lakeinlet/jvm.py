"""The one place lakeinlet reaches Spark's JVM through py4j (classic PySpark, each Spark line it runs on): the
private attributes PySpark keeps its Java objects in are read here and nowhere else."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def gateway() -> Any:
    """The JVM view of the gateway spark-submit started, before any SparkContext exists (connecting
    to it creates none)."""
    from pyspark import SparkContext

    SparkContext._ensure_initialized()
    return SparkContext._jvm


def of(spark: SparkSession) -> Any:
    """The session's JVM view: `of(spark).org.apache...` reaches any class on Spark's classpath."""
    return spark._jvm


def session(spark: SparkSession) -> Any:
    """The Java SparkSession behind `spark` (what engine classes such as Delta's or Iceberg's take)."""
    return spark._jsparkSession


def frame(df: DataFrame) -> Any:
    """The Java Dataset behind `df` (its query plan)."""
    return df._jdf


def hadoop_conf(spark: SparkSession) -> Any:
    """The context's Hadoop Configuration: filesystems made after a change to it see the change."""
    return spark.sparkContext._jsc.hadoopConfiguration()


def loadable(jvm: Any, cls: str) -> bool:
    """Whether Spark's class loader (the one holding spark-submit's --jars/--packages) loads `cls`."""
    try:
        jvm.org.apache.spark.util.Utils.classForName(cls, False, False)
    except Exception:  # py4j wraps ClassNotFoundException
        return False
    return True


def path_uris(spark: SparkSession, uris: Iterable[str]) -> list[str]:
    """Each URI as Hadoop's Path spells it, the form of Spark's `_metadata.file_path` (a space
    becomes `%20`, a doubled slash one)."""
    path = of(spark).org.apache.hadoop.fs.Path
    return [str(path(u).toUri().toString()) for u in uris]


def qualify(spark: SparkSession, uri: str) -> str:
    """`uri` made whole by its filesystem, in Hadoop's form: a relative local path becomes
    `file:/<absolute>`."""
    path = of(spark).org.apache.hadoop.fs.Path(uri)
    return str(path.getFileSystem(hadoop_conf(spark)).makeQualified(path).toUri().toString())


def close_filesystems(spark: SparkSession) -> None:
    """Drop the JVM's cached Hadoop filesystems (each keeps the endpoint and keys it was made with)."""
    of(spark).org.apache.hadoop.fs.FileSystem.closeAll()


def start_callback_server(spark: SparkSession) -> None:
    """Start py4j's callback server (once), so the JVM can call Python objects that implement a Java
    interface."""
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(spark.sparkContext._gateway)


def static_field(spark: SparkSession, cls: str, name: str) -> Any:
    """The value of the static field `name` of class `cls`, private or not (by reflection; py4j's
    class lookup uses the loader that holds the session's jars)."""
    field = of(spark).py4j.reflection.ReflectionUtil.classForName(cls).getDeclaredField(name)
    field.setAccessible(True)
    return field.get(None)
