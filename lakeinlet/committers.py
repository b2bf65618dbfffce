"""Spark settings that commit file writes to s3a with Hadoop's S3A magic committer: no renames
(Spark's default FileOutputCommitter "renames" each file twice, which on S3 is COPY + DELETE)."""

from __future__ import annotations

COMMIT_PROTOCOL = "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
"""In spark-hadoop-cloud (jar group `s3a`); picks the committer by the output path's scheme."""
PARQUET_COMMITTER = "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"
S3A_FACTORY = "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"
"""In hadoop-aws."""


def s3a_committer_conf(scheme: str = "s3a", purge_after_seconds: int | None = None) -> dict[str, str]:
    """Settings routing Spark's file writes to s3a:// through the S3A magic committer.

    Each task streams its files to their final keys as multipart uploads it does not complete
    (under `<dest>/__magic/`, only small `.pending` manifests are written); the job commit
    completes them, so a file appears once, in place: no COPY, no DELETE. Unlike the S3A staging
    committers, the magic one needs no filesystem shared by the driver and the executors (no
    HDFS, no NFS): only S3 itself. It writes a JSON `_SUCCESS` manifest naming the files.

    Only s3a paths change: PathOutputCommitProtocol asks the factory of the output path's scheme,
    and only `s3a` is bound to the S3A factory, so local paths and EMR's `s3://` keep their
    default committer. (Hudi, Iceberg and Delta-through-delta-spark commit with their own
    protocols and are not affected.) Dynamic partition overwrite is not supported by this
    committer; lakeinlet writes with static overwrite mode and appends.

    Uploads of a failed job are aborted at its job commit or abort
    (`fs.s3a.committer.abort.pending.uploads`, under the destination path). A killed driver
    aborts nothing: its uploads stay billed until the bucket's lifecycle rule
    `abort_incomplete_multipart_upload` expires them (infra/terraform), or, with
    `purge_after_seconds`, until the next s3a start-up of the bucket purges every upload older
    than that (`fs.s3a.multipart.purge`: bucket-wide, so also other writers' slow uploads).

    Args:
        scheme: the scheme Spark writes the table with; anything but `s3a` gets no settings.
        purge_after_seconds: also purge the bucket's uploads older than this at s3a start-up.
    """
    if scheme != "s3a":
        return {}
    hadoop = "spark.hadoop."
    conf = {
        "spark.sql.sources.commitProtocolClass": COMMIT_PROTOCOL,
        "spark.sql.parquet.output.committer.class": PARQUET_COMMITTER,
        hadoop + "mapreduce.outputcommitter.factory.scheme.s3a": S3A_FACTORY,
        hadoop + "fs.s3a.committer.name": "magic",
        hadoop + "fs.s3a.committer.magic.enabled": "true",
        hadoop + "fs.s3a.committer.abort.pending.uploads": "true",
    }
    if purge_after_seconds is not None:
        conf |= {hadoop + "fs.s3a.multipart.purge": "true",
                 hadoop + "fs.s3a.multipart.purge.age": str(purge_after_seconds)}
    return conf


def default_committer_conf() -> dict[str, str]:
    """The settings that undo `s3a_committer_conf` (Spark's own protocol, FileOutputCommitter):
    the baseline of bench/api_cost.py, passed as `--spark-conf`."""
    return {"spark.sql.sources.commitProtocolClass":
            "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
            "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter",
            "spark.hadoop.fs.s3a.committer.name": "file"}
