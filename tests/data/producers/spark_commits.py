"""A Spark job appending Parquet (`partitionBy("dt")`) into the landing prefix through S3A, twice:
with the classic FileOutputCommitter (v1: `_temporary/0/_temporary/attempt_…/part-…`, renamed at task
then job commit, `_SUCCESS`) and with the S3A magic committer (`__magic_job-…/…pending`,
`.pendingset`, uploads completed at job commit, a JSON `_SUCCESS`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from typing import Any

from lakeinlet.events import ObjectEvent
from tests.data.producers.corpus import Produced

PREFIX = "spark/orders/"
CLASSIC = {"spark.sql.sources.commitProtocolClass":
           "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
           "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter"}
TASK_SIDE = ("_temporary/", "__magic")
"""What a task writes before its job commits."""


@contextmanager
def classic_committer(spark: Any) -> Iterator[None]:
    """Spark's own protocol and FileOutputCommitter for this session's writes, then back."""
    before = {k: spark.conf.get(k, None) for k in CLASSIC}
    for k, v in CLASSIC.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def _write(spark: Any, bucket: str, first: int) -> list[dict[str, Any]]:
    rows = [{"order_id": i, "amount": i * 2.5, "dt": f"2026-11-2{6 + i % 2}"}
            for i in range(first, first + 6)]
    df = spark.createDataFrame([(r["order_id"], r["amount"], r["dt"]) for r in rows],
                               "order_id bigint, amount double, dt string").repartition(2)
    df.write.mode("append").partitionBy("dt").option("mapreduce.fileoutputcommitter.algorithm.version", "1") \
        .parquet(f"s3a://{bucket}/{PREFIX}")
    return rows


def jobs(spark: Any, s3: Any, bucket: str) -> Produced:
    """Both jobs into a versioned bucket; the events are every version and delete marker they left
    (the S3 events a notification sends), in two changelog commits: what the tasks wrote before
    their jobs committed, then the job commits. Every task-side object is gone when the loader
    reads the first commit (the jobs already ran): the race is replayed through the events, whose
    keys the loader must judge without reading them."""
    with classic_committer(spark):
        rows = _write(spark, bucket, 0)
    rows += _write(spark, bucket, 100)  # the session's committer: the S3A magic committer
    events = _events(s3, bucket)
    tasks = tuple(e for e in events if any(t in e.key for t in TASK_SIDE) and e.is_created)
    commits = tuple(e for e in events if e not in tasks)
    data = frozenset(e.key for e in commits if e.is_created and e.key.endswith(".parquet")
                     and not any(t in e.key for t in TASK_SIDE))
    artefacts = {e.key: "trailing `/`" if e.key.endswith("/") else "Spark's rule for hidden files"
                 for e in events if e.is_created and e.key not in data}
    return Produced("spark", (tasks, commits), tuple(rows), data, filtered=artefacts)


def _events(s3: Any, bucket: str) -> list[ObjectEvent]:
    """One event per version and delete marker under PREFIX, oldest first."""
    listed = s3.list_object_versions(Bucket=bucket, Prefix=PREFIX)
    magic = {v["Key"].rsplit("/", 1)[-1] for v in listed.get("Versions", []) if "__magic" in v["Key"]}
    found = [(v["LastModified"], ObjectEvent(bucket, v["Key"], _created(v["Key"], magic),
                                             v["LastModified"].astimezone(UTC), v["Size"],
                                             v["ETag"].strip('"'), v["VersionId"]))
             for v in listed.get("Versions", [])]
    found += [(m["LastModified"], ObjectEvent(bucket, m["Key"], "ObjectRemoved:DeleteMarkerCreated",
                                              m["LastModified"].astimezone(UTC), version_id=m["VersionId"]))
              for m in listed.get("DeleteMarkers", [])]
    return [e for _, e in sorted(found, key=lambda pair: pair[0])]


def _created(key: str, magic: set[str]) -> str:
    """The event S3 names: task PUTs, the classic rename's copies, the magic job's completed uploads."""
    if not key.endswith(".parquet") or any(t in key for t in TASK_SIDE):
        return "ObjectCreated:Put"
    completed = key.rsplit("/", 1)[-1] in magic
    return "ObjectCreated:CompleteMultipartUpload" if completed else "ObjectCreated:Copy"

