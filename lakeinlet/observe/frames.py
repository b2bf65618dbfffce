"""What the operator notebooks look at: the changelog, the target's commits, the ledger and the DLQ
as pandas frames, with the target readers of `observe.targets` and the figures of `observe.plots`
re-exported. Each `*_frame` reader has a pure counterpart (`*_from_*`) that tests feed."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from lakeinlet import jars as jarlib
from lakeinlet import jvm as lakejvm
from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import CommitInfo, DeltaChangelog
from lakeinlet.delta_io import query
from lakeinlet.observe.pipeline import (
    Pipeline,
    Table,
    batches_frame,
    dlq_url,
    given_pipeline,
    ledger_frame,
    reset_point,
    tables_frame,
)
from lakeinlet.observe.plots import plot_changelog_commits, plot_lag, plot_load_batches
from lakeinlet.observe.targets import (
    BATCH_COLUMNS,
    batches_from_commits,
    counts_from_rows,
    duplicates,
    freshness_frame,
    load_batches_frame,
    local_catalog,
    open_target,
    routes_frame,
    status_row,
    table_counts,
    target_flags,
    target_frame,
    target_rows,
)
from lakeinlet.storage import TableLocation

__all__ = [
    "BATCH_COLUMNS", "Pipeline", "Table", "batches_frame", "batches_from_commits",
    "changelog_commits_frame", "changelog_rows", "commits_from_infos", "counts_from_rows",
    "dlq_from_messages", "dlq_messages", "dlq_url", "duplicates", "freshness_frame", "given_pipeline",
    "lag_frame", "lag_from", "lag_summary", "ledger_frame", "load_batches_frame", "local_catalog",
    "local_env", "open_target", "plot_changelog_commits", "plot_lag", "plot_load_batches",
    "poison_reason", "quarantined", "quarantined_from_ledger", "read_table", "reset_point",
    "routes_frame", "status_row", "stop_spark", "table_counts", "tables_frame", "target_flags",
    "target_frame", "target_rows"]


def local_env(repo: Path | None = None) -> dict[str, str]:
    """Environment defaults for driving both jobs in-process against the local emulator: the
    emulator's fake credentials, Spark on loopback with this interpreter, and `LAKEINLET_JARS` set
    to a `.jars` folder in `repo` (default: the working directory) or above it, if there is one
    (else the jobs use the jar cache `lakeinlet jars` fetches into).
    Returns what was set."""
    from lakeinlet.dev.emulator import TEST_CREDENTIALS

    wanted = dict(TEST_CREDENTIALS) | {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    here = (repo or Path.cwd()).resolve()
    jars = next((p / ".jars" for p in (here, *here.parents) if (p / ".jars").is_dir()), None)
    if jars is not None:
        wanted["LAKEINLET_JARS"] = str(jars)
    elif "LAKEINLET_JARS" not in os.environ and jarlib.missing(jarlib.default_dir(), "s3a"):
        warnings.warn(f"no s3a jars in {jarlib.default_dir()} (where the jobs look) and no .jars folder "
                      "above the working directory: run `make jars` or `lakeinlet jars --only s3a` "
                      "first, or Spark cannot read s3a:// paths", stacklevel=2)
    os.environ.pop("AWS_ENDPOINT_URL", None)  # the jobs get --endpoint-url explicitly
    done = {k: v for k, v in wanted.items() if k not in os.environ}
    os.environ.update(done)
    return done


def stop_spark() -> bool:
    """Stop the Spark session the loader started in this process, and drop the JVM's cached
    s3a filesystems (they remember the emulator's port), so a re-run against a new emulator in
    the same kernel starts clean. Returns whether a session was running."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        return False
    lakejvm.close_filesystems(spark)
    spark.stop()
    return True


# ---- lakeinlet's own Delta tables: changelog, ledger, quarantine ------------------------------

def read_table(uri: str, aws: AwsSection, sql: str = "SELECT * FROM t") -> pd.DataFrame:
    """Run `sql` over the Delta table at `uri` (registered as `t`) with delta-rs; no Spark. For
    lakeinlet's own tables (changelog, ledger, quarantine); a target of any format: `target_frame`."""
    return query(uri, aws, sql).to_pandas()


def changelog_rows(uri: str, aws: AwsSection, after: int = -1, until: int | None = None) -> pd.DataFrame:
    """The events committed in changelog versions `after+1 .. until` (what a loader whose
    checkpoint is `after` reads next), with their commit version and time."""
    cols = ["_commit_version", "_commit_timestamp", "key", "event_name", "size", "event_time",
            "envelope", "poll_batch"]
    rows = pa.table(DeltaChangelog(uri, aws).read_versions(after, until)).select(cols).to_pandas()
    return rows.sort_values(["_commit_version", "key"]).reset_index(drop=True)


def quarantined(ledger_uri: str, aws: AwsSection, partial: bool = True) -> pd.DataFrame:
    """Ledger rows of objects not (fully) loaded: status other than `loaded`, and with `partial`
    also loaded objects whose malformed records were dropped. Newest first."""
    ledger = read_table(ledger_uri, aws)
    return quarantined_from_ledger(ledger, partial)


def quarantined_from_ledger(ledger: pd.DataFrame, partial: bool = True) -> pd.DataFrame:
    bad = ledger["status"] != "loaded"
    if partial:
        bad |= ledger["bad_records"] > 0
    cols = ["key", "status", "reason", "rows", "bad_records", "bytes", "changelog_version",
            "target_version", "loaded_at"]
    return ledger.loc[bad, cols].sort_values(["target_version", "key"], ascending=[False, True]) \
        .reset_index(drop=True)


# ---- changelog commits --------------------------------------------------------------------------

def changelog_commits_frame(uri: str, aws: AwsSection) -> pd.DataFrame:
    """One row per changelog commit (a metadata query): version, time, events, messages, source."""
    return commits_from_infos(DeltaChangelog(uri, aws).commits())


def commits_from_infos(commits: Sequence[CommitInfo]) -> pd.DataFrame:
    rows = [{"version": c.version, "timestamp": c.timestamp, "events": c.rows,
             "messages": int(c.metadata.get("messages", 0) or 0),
             "source": c.metadata.get("source_id") or c.metadata.get("source", ""),
             "poll_batch": c.metadata.get("poll_batch", "")} for c in commits]
    frame = pd.DataFrame(rows, columns=["version", "timestamp", "events", "messages", "source",
                                        "poll_batch"])
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame


# ---- lag: event time → loaded time, per object ---------------------------------------------------

def lag_frame(table_uri: str, changelog_uri: str, aws: AwsSection, ledger_uri: str | None = None,
              target_format: str = "delta", **options: Any) -> pd.DataFrame:
    """Per loaded object: when S3 emitted the event, when the event source received it, when
    the changelog commit and the target commit holding it happened, and the seconds between.
    `options`: the table's loader settings, as for `load_batches_frame`."""
    ledger_uri = ledger_uri or options.get("ledger") or TableLocation(table_uri).sibling("_ledger").uri
    ledger = read_table(ledger_uri, aws)
    changelog = read_table(changelog_uri, aws, "SELECT event_id, received_at FROM t")
    commits = changelog_commits_frame(changelog_uri, aws)
    batches = load_batches_frame(table_uri, aws, target_format, **({"ledger": ledger_uri} | options))
    return lag_from(ledger, changelog, commits, batches)


def lag_from(ledger: pd.DataFrame, changelog: pd.DataFrame, commits: pd.DataFrame,
             batches: pd.DataFrame) -> pd.DataFrame:
    led = ledger[ledger["status"] == "loaded"][["key", "event_id", "event_time", "changelog_version",
                                                "target_version", "rows"]]
    received = changelog.drop_duplicates("event_id").set_index("event_id")["received_at"]
    out = led.assign(
        received_at=led["event_id"].map(received),
        changelog_at=led["changelog_version"].map(commits.set_index("version")["timestamp"]),
        loaded_at=led["target_version"].map(batches.set_index("version")["timestamp"]))
    for col in ("event_time", "received_at", "changelog_at", "loaded_at"):
        out[col] = pd.to_datetime(out[col], utc=True)
    out["queue_s"] = (out["received_at"] - out["event_time"]).dt.total_seconds()
    out["changelog_s"] = (out["changelog_at"] - out["received_at"]).dt.total_seconds()
    out["load_s"] = (out["loaded_at"] - out["changelog_at"]).dt.total_seconds()
    out["lag_s"] = (out["loaded_at"] - out["event_time"]).dt.total_seconds()
    return out.drop(columns=["event_id"]).sort_values("event_time").reset_index(drop=True)


def lag_summary(lag: pd.DataFrame) -> dict[str, float]:
    """Median, 95th percentile and maximum end-to-end lag in seconds."""
    s = lag["lag_s"].dropna()
    if s.empty:
        return {"objects": 0, "p50_s": 0.0, "p95_s": 0.0, "max_s": 0.0}
    return {"objects": int(s.size), "p50_s": round(float(s.quantile(0.5)), 1),
            "p95_s": round(float(s.quantile(0.95)), 1), "max_s": round(float(s.max()), 1)}


# ---- dead letters ----------------------------------------------------------------------------------

def dlq_messages(dlq_url: str, aws: AwsSection, limit: int = 10) -> pd.DataFrame:
    """Peek at up to `limit` dead letters without deleting or hiding them (VisibilityTimeout=0),
    with why the event source could not use each one. SQS has no true peek: each look adds one
    to a message's receive count (harmless on a DLQ, which has no redrive of its own)."""
    sqs = client("sqs", aws)
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(3):  # a full page may not be all of it: SQS samples; ask again (at most 3x)
        got = sqs.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=0,
                                  WaitTimeSeconds=0, AttributeNames=["All"]).get("Messages", [])
        seen |= {m["MessageId"]: m for m in got}
        if len(seen) >= limit or len(got) < 10:
            break
    return dlq_from_messages(list(seen.values())[:limit])


def dlq_from_messages(messages: Sequence[dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for m in messages:
        attrs = m.get("Attributes", {})
        sent = attrs.get("SentTimestamp")
        rows.append({"message_id": m["MessageId"], "sent_at": _ms(sent) if sent else None,
                     "receive_count": int(attrs.get("ApproximateReceiveCount", 0)),
                     "reason": poison_reason(m.get("Body", ""), m["MessageId"])
                     .removeprefix(f"message {m['MessageId']}: "),
                     "body": m.get("Body", "")[:120]})
    return pd.DataFrame(rows, columns=["message_id", "sent_at", "receive_count", "reason", "body"])


def _ms(value: Any) -> datetime:
    return datetime.fromtimestamp(int(value) / 1000, UTC)


def poison_reason(body: str, message_id: str = "?") -> str:
    """What the event source's envelope parser says about a message ("" if it parses)."""
    from lakeinlet.errors import EnvelopeError
    from lakeinlet.sources.envelopes import parse

    try:
        parse(body, message_id)
    except EnvelopeError as exc:
        return str(exc)
    return ""
