"""What the operator notebooks look at: the changelog, the target's commit history, the ledger and
the DLQ as pandas frames, and matplotlib figures of them. Nothing here writes to the pipeline's
tables or queues (a DLQ peek does count as one receive of each message it shows).

Needs the `notebooks` extra (pandas, matplotlib). Each `*_frame` reader has a pure counterpart
(`*_from_*`) that tests feed with recorded values.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from lakeinlet.aws import AwsSection, client, delta_uri, storage_options
from lakeinlet.changelog import CommitInfo, DeltaChangelog

META = "lakeinlet."
OUTCOME_FIELDS = ("bucket", "key", "etag", "version_id", "size", "event_id", "event_time",
                  "changelog_version", "status", "reason", "rows", "bad_records")
"""The fields of one outcome in a load commit's `lakeinlet.outcomes` metadata (in order)."""


def local_env(repo: Path | None = None) -> dict[str, str]:
    """Environment defaults for driving both jobs in-process against the local emulator: the
    emulator's fake credentials, Spark on loopback with this interpreter, and the s3a jars of the
    nearest checkout (`<repo>/.jars`, as `make jars` fetches them). Returns what was set."""
    from lakeinlet.emulator import TEST_CREDENTIALS

    wanted = dict(TEST_CREDENTIALS) | {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
    here = (repo or Path.cwd()).resolve()
    jars = next((p / ".jars" for p in (here, *here.parents) if (p / ".jars").is_dir()), None)
    if jars is not None:
        wanted["LAKEINLET_JARS"] = str(jars)
    elif "LAKEINLET_JARS" not in os.environ:
        warnings.warn("no .jars folder above the working directory and LAKEINLET_JARS is unset: "
                      "run `make jars` first, or Spark cannot read s3a:// paths", stacklevel=2)
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
    spark._jvm.org.apache.hadoop.fs.FileSystem.closeAll()  # type: ignore[union-attr]
    spark.stop()
    return True

# ---- tables -----------------------------------------------------------------------------------

def read_table(uri: str, aws: AwsSection, sql: str = "SELECT * FROM t") -> pd.DataFrame:
    """Run `sql` over the Delta table at `uri` (registered as `t`) with delta-rs; no Spark."""
    from deltalake import DeltaTable, QueryBuilder

    uri = delta_uri(uri)
    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all()).to_pandas()


def duplicates(uri: str, aws: AwsSection, key: str) -> int:
    """How many values of `key` occur in more than one row of the table (0 = no duplicates)."""
    sql = f"SELECT count(*) AS n FROM (SELECT {key} FROM t GROUP BY {key} HAVING count(*) > 1) d"
    return int(read_table(uri, aws, sql)["n"].iloc[0])


def table_counts(uri: str, aws: AwsSection, key: str) -> dict[str, int]:
    """Rows, distinct `key` values, keys held by more than one row, and source objects."""
    sql = (f"SELECT count(*) AS rows, count(DISTINCT {key}) AS keys, "
           "count(DISTINCT _source_key) AS objects FROM t")
    got = read_table(uri, aws, sql).iloc[0]
    return {"rows": int(got["rows"]), "keys": int(got["keys"]),
            "duplicates": duplicates(uri, aws, key), "objects": int(got["objects"])}


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


# ---- load batches (the target's commit history) -------------------------------------------------

BATCH_COLUMNS = ["version", "timestamp", "operation", "batch", "start", "position", "objects",
                 "loaded", "not_loaded", "rows", "source_bytes", "data_files", "data_bytes", "reason"]


def load_batches_frame(table_uri: str, aws: AwsSection, app_id: str | None = None) -> pd.DataFrame:
    """One row per loader commit of the target (loads and checkpoint resets), oldest first:
    objects, rows and source bytes from the commit's outcomes; data files and bytes the batch
    added (from the table's current files)."""
    from deltalake import DeltaTable

    uri = delta_uri(table_uri)
    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    adds = pa.table(dt.get_add_actions(flatten=True))
    return batches_from_history(dt.history(), adds.to_pylist(), app_id)


def batches_from_history(history: Iterable[dict[str, Any]], add_actions: Iterable[dict[str, Any]],
                         app_id: str | None = None) -> pd.DataFrame:
    files: dict[str, list[int]] = {}
    for add in add_actions:
        batch = add.get("min._ingest_batch") or _batch_folder(str(add["path"]))
        files.setdefault(str(batch), []).append(int(add["size_bytes"]))
    rows = [_batch_row(h, files) for h in history if META + "operation" in h
            and (app_id is None or h.get(META + "app_id") == app_id)]
    frame = pd.DataFrame(rows, columns=BATCH_COLUMNS).sort_values("version").reset_index(drop=True)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame


def _batch_folder(path: str) -> str:
    """`data/<batch id>/…`: the folder the loader's Spark write uses for one batch."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "data" else ""


def _batch_row(h: dict[str, Any], files: dict[str, list[int]]) -> dict[str, Any]:
    listed = json.loads(h.get(META + "outcomes", "[]"))
    outcomes = [dict(zip(OUTCOME_FIELDS, o, strict=False)) for o in listed]
    batch = h.get(META + "batch", "")
    sizes = files.get(batch, []) if batch else []
    loaded = sum(o["status"] == "loaded" for o in outcomes)
    return {"version": int(h["version"]), "timestamp": _ms(h["timestamp"]),
            "operation": h[META + "operation"], "batch": batch,
            "start": _position(h.get(META + "start")), "position": _position(h.get(META + "position")),
            "objects": len(outcomes), "loaded": loaded, "not_loaded": len(outcomes) - loaded,
            "rows": sum(int(o["rows"]) for o in outcomes),
            "source_bytes": sum(int(o["size"] or 0) for o in outcomes),
            "data_files": len(sizes), "data_bytes": sum(sizes), "reason": h.get(META + "reason", "")}


def _position(text: str | None) -> str:
    """A checkpoint position as `checkpoint show` prints it: `version` or `version+offset`."""
    if not text:
        return ""
    doc = json.loads(text)
    return f"{doc['complete']}" + (f"+{doc['offset']}" if doc.get("offset") else "")


def _ms(value: Any) -> datetime:
    return datetime.fromtimestamp(int(value) / 1000, UTC)


# ---- lag: event time → loaded time, per object ---------------------------------------------------

def lag_frame(table_uri: str, changelog_uri: str, aws: AwsSection,
              ledger_uri: str | None = None) -> pd.DataFrame:
    """Per loaded object: when S3 emitted the event, when the event source received it, when
    the changelog commit and the target commit holding it happened, and the seconds between."""
    ledger = read_table(ledger_uri or delta_uri(table_uri).rstrip("/") + "_ledger", aws)
    changelog = read_table(changelog_uri, aws, "SELECT event_id, received_at FROM t")
    commits = changelog_commits_frame(changelog_uri, aws)
    batches = load_batches_frame(table_uri, aws)
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


def poison_reason(body: str, message_id: str = "?") -> str:
    """What the event source's envelope parser says about a message ("" if it parses)."""
    from lakeinlet.errors import EnvelopeError
    from lakeinlet.sources.envelopes import parse

    try:
        parse(body, message_id)
    except EnvelopeError as exc:
        return str(exc)
    return ""


# ---- figures -----------------------------------------------------------------------------------------

def plot_changelog_commits(commits: pd.DataFrame) -> Figure:
    """Events per changelog commit over time (one bar per commit, labelled with its version)."""
    fig = Figure(figsize=(8, 3), layout="constrained")
    ax = fig.subplots()
    t = commits["timestamp"].dt.tz_convert(None)
    width = _bar_width(t)
    ax.bar(t, commits["events"], width=width, color="tab:blue")
    for when, n, v in zip(t, commits["events"], commits["version"], strict=True):
        ax.annotate(f"v{v}", (when, n), ha="center", va="bottom", fontsize=8)
    ax.set(title="Changelog: events per commit", xlabel="commit time (UTC)", ylabel="events")
    ax.margins(y=0.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.autofmt_xdate()
    return fig


def _bar_width(t: pd.Series) -> float:
    """A bar width in days: a third of the smallest gap between commits (at least 0.2 s)."""
    gaps = t.sort_values().diff().dropna().dt.total_seconds()
    seconds = max(float(gaps[gaps > 0].min()) / 3 if (gaps > 0).any() else 1.0, 0.2)
    return seconds / 86_400


def plot_load_batches(batches: pd.DataFrame) -> Figure:
    """Per load commit: source objects (loaded / not loaded) and bytes read beside the data files
    and bytes written. Resets and empty re-reads show as zero-height groups."""
    loads = batches[batches["operation"] == "load"].reset_index(drop=True)
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    x, w = loads.index.to_numpy(), 0.38
    left.bar(x - w / 2, loads["loaded"], w, color="tab:blue", label="objects loaded")
    left.bar(x - w / 2, loads["not_loaded"], w, bottom=loads["loaded"], color="tab:red",
             label="objects not loaded")
    left.bar(x + w / 2, loads["data_files"], w, color="tab:orange", label="data files written")
    left.set(title="Files per load batch", ylabel="files")
    right.bar(x - w / 2, loads["source_bytes"] / 1024, w, color="tab:blue", label="source KiB read")
    right.bar(x + w / 2, loads["data_bytes"] / 1024, w, color="tab:orange", label="Parquet KiB written")
    right.set(title="Bytes per load batch", ylabel="KiB")
    for ax in (left, right):
        ax.set_xticks(x, [f"v{v}" for v in loads["version"]])
        ax.set_xlabel("target version")
        ax.margins(y=0.25)
        ax.legend(fontsize=8)
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylim(0, max([1, *loads["objects"], *loads["data_files"]]) * 1.3)  # room for the legend
    return fig


def plot_lag(lag: pd.DataFrame) -> Figure:
    """The end-to-end lag distribution, and where the time went (queue, changelog, load)."""
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    s = lag["lag_s"].dropna()
    left.hist(s, bins=min(20, max(5, s.size)), color="tab:blue")
    if not s.empty:
        for q, style in ((0.5, "--"), (0.95, ":")):
            left.axvline(s.quantile(q), color="black", linestyle=style, label=f"p{int(q * 100)}")
        left.legend(fontsize=8)
    left.set(title="Lag: event time → loaded", xlabel="seconds", ylabel="objects")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    stages = ["queue_s", "changelog_s", "load_s"]
    data = [lag[c].dropna() for c in stages]
    right.boxplot(data, tick_labels=["S3 → received", "received → changelog", "changelog → target"])
    right.set(title="Where the time went", ylabel="seconds")
    right.tick_params(axis="x", labelsize=8)
    return fig
