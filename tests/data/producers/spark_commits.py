"""Spark jobs appending Parquet (`partitionBy("dt")`) into the landing prefix through S3A, two at once:
one with the classic FileOutputCommitter (v1: `_temporary/0/_temporary/attempt_…/part-…`, renamed at
task then job commit, `_SUCCESS`), one with the S3A magic committer (`__magic…/…pending`,
`.pendingset`, uploads completed at job commit, a JSON `_SUCCESS`); a loader runs between."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC
from typing import Any

from lakeinlet import jvm as lakejvm
from lakeinlet.events import ObjectEvent
from tests.data.producers.commit_gate import CommitGate
from tests.data.producers.corpus import Produced

PREFIX = "spark/"
CLASSIC_DEST, MAGIC_DEST = "spark/orders/", "spark/refunds/"
"""One folder per job: on Spark 4.1 a magic job's cleanup deletes its destination's `_temporary/`."""
CLASSIC = {"spark.sql.sources.commitProtocolClass":
           "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
           "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter"}
"""Spark's own protocol and FileOutputCommitter (the loader's session writes s3a with the magic one)."""
HELD = (("connection.request.timeout", "600000"), ("connection.timeout", "600000"))
"""S3A on Spark 4.1 (AWS SDK v2) gives up on a request after 60 s, and retries a held rename. No
unit: Spark 3.5's S3A reads connection.timeout as an integer (milliseconds)."""
TASK_SIDE = ("_temporary/", "__magic")
"""What a task writes before its job commits."""


def race(spark: Any, s3: Any, bucket: str, gate: CommitGate,
         while_committing: Callable[[list[ObjectEvent]], None]) -> Produced:
    """Run both jobs into `bucket` (versioned, new) through `gate` (which must outlive every later
    read of the bucket: S3A keeps the bucket's endpoint); once both job commits are held, call
    `while_committing` with the events S3 sent so far (the tasks' PUTs and COPYs, the deletes of the
    task commits' renames), then let the commits through. Returns the rows and, as the second
    commit, the events of the job commits."""
    classic = spark.newSession()  # its own SQL settings, the same SparkContext
    for k, v in CLASSIC.items():
        classic.conf.set(k, v)
    hadoop = lakejvm.hadoop_conf(spark)
    for option, value in (("endpoint", gate.endpoint), *HELD):
        hadoop.set(f"fs.s3a.bucket.{bucket}.{option}", value)
    jobs = [_Job(classic, bucket, CLASSIC_DEST, 0), _Job(spark, bucket, MAGIC_DEST, 100)]
    _until_held(gate, jobs)
    racing = _events(s3, bucket)
    while_committing(racing)
    gate.release()
    rows = [r for job in jobs for r in job.done()]
    seen = {e.version_id for e in racing}
    commits = [e for e in _events(s3, bucket) if e.version_id not in seen]
    data = frozenset(e.key for e in commits if e.is_created and e.key.endswith(".parquet")
                     and not any(t in e.key for t in TASK_SIDE))
    artefacts = {e.key: "trailing `/`" if e.key.endswith("/") else "Spark's rule for hidden files"
                 for e in [*racing, *commits] if e.is_created and e.key not in data}
    return Produced("spark", (tuple(racing), tuple(commits)), tuple(rows), data, filtered=artefacts)


def _until_held(gate: CommitGate, jobs: list[_Job], seconds: int = 120) -> None:
    """Both job commits held, or the jobs' errors."""
    for _ in range(seconds):
        if gate.wait_for({"rename", "complete"}, 1):
            return
        if any(not job.thread.is_alive() for job in jobs):
            break
    raise AssertionError(f"job commits held: {gate.held}; errors: {[job.error for job in jobs]}")


class _Job:
    """One append in a thread of its own (its job commit blocks in the gate)."""

    def __init__(self, session: Any, bucket: str, dest: str, first: int) -> None:
        self.rows = [{"order_id": i, "amount": i * 2.5, "dt": f"2026-11-2{6 + i % 2}"}
                     for i in range(first, first + 6)]
        self.error: BaseException | None = None
        df = session.createDataFrame([(r["order_id"], r["amount"], r["dt"]) for r in self.rows],
                                     "order_id bigint, amount double, dt string").repartition(2)
        writer = df.write.mode("append").partitionBy("dt") \
            .option("mapreduce.fileoutputcommitter.algorithm.version", "1")
        path = f"s3a://{bucket}/{dest}"
        self.thread = threading.Thread(target=self._run, args=(writer, path), daemon=True)
        self.thread.start()

    def _run(self, writer: Any, path: str) -> None:
        try:
            writer.parquet(path)
        except BaseException as e:  # handed to the test by done()
            self.error = e

    def done(self) -> list[dict[str, Any]]:
        self.thread.join(300)
        if self.error or self.thread.is_alive():
            raise AssertionError(f"the Spark job did not finish: {self.error}")
        return self.rows


def _events(s3: Any, bucket: str) -> list[ObjectEvent]:
    """One event per version and delete marker under PREFIX, oldest first: what S3 sent."""
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
