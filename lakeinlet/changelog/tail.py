"""The loader's fast path into the changelog: the newest versions read straight from their commit
files and the data files those add, without opening the table (delta-rs is the plain path)."""

from __future__ import annotations

import io
import json
import logging
import os
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
from botocore.exceptions import BotoCoreError, ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.schema import CHANGELOG_PARTITION_BY, CHANGELOG_SCHEMA

log = logging.getLogger(__name__)

COMMIT_FILE = re.compile(r"^(\d{20})\.json$")
WORKERS = 8
"""Commit and data files fetched at once (S3 GETs are latency-bound)."""
KEEP = 4096
"""Commit files kept parsed; the oldest half is dropped past this."""
COMMIT_VERSION = pa.field("_commit_version", pa.int64())
COMMIT_TIMESTAMP = pa.field("_commit_timestamp", pa.timestamp("ms", tz="UTC"))
DATA_COLUMNS = [n for n in CHANGELOG_SCHEMA.names if n not in CHANGELOG_PARTITION_BY]
READABLE = {"commitInfo", "add", "remove", "txn", "protocol", "metaData"}


class NotPlain(Exception):
    """A version holds something only a full Delta reader handles (the message says what)."""


@dataclass(frozen=True)
class LogCommit:
    """One parsed commit file: its commitInfo and the data files it added with dataChange=true."""

    version: int
    info: dict[str, Any]
    files: tuple[tuple[str, str | None], ...]
    """(path relative to the table, received_date partition value) per added file."""
    problem: str | None = None
    """Why its rows need a full Delta reader (None: plain appends, compaction or markers)."""


class ChangelogTail:
    """Commit history and rows of the versions after a position, read from the commit files.

    Opening the changelog with delta-rs reads its last log checkpoint (every file the table
    holds) and replays up to `checkpointInterval` commits after it, so a read of the few versions
    after a loader's checkpoint would grow with the changelog's history (bench/changelog_history.py
    measures that read on a long changelog against a 10-commit one). The versions a loader needs
    are in `_delta_log/<version>.json`, each naming the data files it added. This reads exactly
    those: one listing of the log from the loader's version on, the commit files (kept once read:
    they never change), and the data files.

    Only what lakeinlet's writers put in a changelog is read this way: appends (blind or
    delta-rs), compaction (files rewritten with dataChange=false, skipped as the change data feed
    skips them), vacuum markers, and a table creation with the changelog's own schema. Anything
    else in a version (another schema or partitioning, column mapping, reader features, change
    data files, deletion vectors, rows removed) makes `rows` return None, as does a commit file
    that is gone (log cleanup) or a data file without the changelog's columns; the caller then
    reads through delta-rs.
    """

    def __init__(self, uri: str, aws: AwsSection) -> None:
        self._files = _files_for(uri, aws)
        self._commits: dict[int, LogCommit] = {}

    @property
    def usable(self) -> bool:
        """False for a URI scheme this does not read (the caller uses delta-rs)."""
        return self._files is not None

    def commits(self, after: int, limit: int) -> list[LogCommit] | None:
        """The first `limit` commits after version `after`, oldest first ([] when there are
        none); None when the commit files cannot tell (the first is gone, or unreadable)."""
        if self._files is None:
            return None
        try:
            versions = self._files.versions_after(after, limit)
            if versions and versions[0] != after + 1:
                return None  # cleaned up, or `after` is beyond the head: delta-rs says which
            return self._load(_contiguous(versions))
        except (OSError, ClientError, BotoCoreError, ValueError) as exc:
            log.debug("changelog commit files unreadable, reading through delta-rs: %s", exc)
            return None

    def rows(self, after: int, until: int) -> pa.Table | None:
        """Rows versions `after+1 .. until` added (`until` must exist), with `_commit_version` and
        `_commit_timestamp`, or None when a full Delta reader must read them (see the class doc)."""
        wanted = range(after + 1, until + 1)
        if all(v in self._commits for v in wanted):  # just planned from them: commit files never change
            commits: list[LogCommit] | None = [self._commits[v] for v in wanted]
        else:
            commits = self.commits(after, until - after)
        if commits is None or len(commits) != until - after:
            return None
        problem = next((c.problem for c in commits if c.problem), None)
        if problem:
            log.debug("changelog versions %d..%d read through delta-rs: %s", after + 1, until, problem)
            return None
        assert self._files is not None
        files = [(c, path, day) for c in commits for path, day in c.files]
        try:
            with ThreadPoolExecutor(min(WORKERS, max(len(files), 1))) as pool:
                parts = list(pool.map(lambda f: _part(self._files, *f), files))  # type: ignore[arg-type]
        except (OSError, ClientError, BotoCoreError, NotPlain, pa.ArrowException) as exc:
            log.debug("changelog data files read through delta-rs: %s", exc)
            return None
        schema = CHANGELOG_SCHEMA.append(COMMIT_VERSION).append(COMMIT_TIMESTAMP)
        return pa.concat_tables(parts) if parts else schema.empty_table()

    def _load(self, versions: list[int]) -> list[LogCommit]:
        assert self._files is not None
        missing = [v for v in versions if v not in self._commits]
        if missing:
            if len(self._commits) > KEEP:
                for v in sorted(self._commits)[: KEEP // 2]:
                    del self._commits[v]
            with ThreadPoolExecutor(min(WORKERS, len(missing))) as pool:
                for v, body in zip(missing, pool.map(self._files.commit_file, missing), strict=True):
                    if body is None:
                        raise ValueError(f"commit file of version {v} is gone")
                    self._commits[v] = parse_commit(v, body)
        return [self._commits[v] for v in versions]


def parse_commit(version: int, body: bytes) -> LogCommit:
    """A commit file's actions → LogCommit (problem set when its rows need a full reader)."""
    info: dict[str, Any] | None = None
    files: list[tuple[str, str | None]] = []
    problem = None
    for line in body.splitlines():
        if not line.strip():
            continue
        action = json.loads(line)
        kind = next(iter(action))
        value = action[kind]
        if kind == "commitInfo":
            info = value
        elif kind not in READABLE:
            problem = problem or f"version {version} has a {kind} action"
        elif kind == "add" and value.get("dataChange", True):
            if value.get("deletionVector") or "://" in value["path"]:
                problem = problem or f"version {version} adds a file with a deletion vector or absolute path"
            files.append((unquote(value["path"]), (value.get("partitionValues") or {}).get(
                CHANGELOG_PARTITION_BY[0])))
        elif kind == "remove" and value.get("dataChange", True):
            problem = problem or f"version {version} removes rows"
        elif kind in ("protocol", "metaData"):
            problem = problem or _unreadable_table(version, kind, value)
    if info is None or "timestamp" not in info:
        raise ValueError(f"commit file of version {version} has no commitInfo with a timestamp")
    if "inCommitTimestamp" in info:
        problem = problem or f"version {version} uses in-commit timestamps"
    return LogCommit(version, info, tuple(files), problem)


def _unreadable_table(version: int, kind: str, value: dict[str, Any]) -> str | None:
    """Why a protocol or metaData action asks for more than this reads, or None."""
    if kind == "protocol":
        return None if int(value.get("minReaderVersion", 1)) == 1 else \
            f"version {version} sets reader version {value.get('minReaderVersion')}"
    config = value.get("configuration") or {}
    fields = json.loads(value.get("schemaString") or "{}").get("fields", [])
    if (list(value.get("partitionColumns") or []) != CHANGELOG_PARTITION_BY
            or [f.get("name") for f in fields] != CHANGELOG_SCHEMA.names
            or config.get("delta.columnMapping.mode", "none") != "none"):
        return f"version {version} sets a schema, partitioning or column mapping this does not read"
    return None


def _contiguous(versions: list[int]) -> list[int]:
    """The run of consecutive versions at the start of a sorted list."""
    out: list[int] = []
    for v in versions:
        if out and v != out[-1] + 1:
            break
        out.append(v)
    return out


def _part(files: _Files, commit: LogCommit, path: str, day: str | None) -> pa.Table:
    """One data file's rows in the changelog schema, with the partition and commit columns."""
    data = pq.read_table(files.open_data(path))
    missing = [n for n in DATA_COLUMNS if n not in data.column_names]
    if missing:
        raise NotPlain(f"{path} has no column(s) {missing}")
    n = data.num_rows
    columns = [data.column(name) if name not in CHANGELOG_PARTITION_BY else pa.array([day] * n, pa.string())
               for name in CHANGELOG_SCHEMA.names]
    table = pa.Table.from_arrays(columns, names=CHANGELOG_SCHEMA.names).cast(CHANGELOG_SCHEMA)
    return table.append_column(COMMIT_VERSION, pa.array([commit.version] * n, pa.int64())).append_column(
        COMMIT_TIMESTAMP, pa.array([int(commit.info["timestamp"])] * n, COMMIT_TIMESTAMP.type))


class _Files:
    """The changelog's log and data files (a local folder or an S3 prefix)."""

    def versions_after(self, after: int, limit: int) -> list[int]:
        raise NotImplementedError

    def commit_file(self, version: int) -> bytes | None:
        raise NotImplementedError

    def open_data(self, path: str) -> Any:
        raise NotImplementedError


def _versions(names: Iterable[str], after: int, limit: int) -> list[int]:
    found = sorted(int(m.group(1)) for n in names if (m := COMMIT_FILE.match(n)) and int(m.group(1)) > after)
    return found[:limit]


class _LocalFiles(_Files):
    def __init__(self, root: str) -> None:
        self.root, self._log = root, os.path.join(root, "_delta_log")

    def _exists(self, version: int) -> bool:
        return os.path.exists(os.path.join(self._log, f"{version:020d}.json"))

    def versions_after(self, after: int, limit: int) -> list[int]:
        """Commit files probed one version at a time from `after+1` (a stat each: the folder
        holds every version since the table began, a listing would grow with it). When there is
        none and `after`'s own file is gone too, the folder is listed: a cleaned-up log must not
        read as "no new versions"."""
        found: list[int] = []
        for v in range(after + 1, after + 1 + limit):
            if not self._exists(v):
                break
            found.append(v)
        if not found and (after < 0 or not self._exists(after)):  # cleaned up? the listing tells
            return _versions(os.listdir(self._log), after, 1) if os.path.isdir(self._log) else []
        return found

    def commit_file(self, version: int) -> bytes | None:
        try:
            with open(os.path.join(self._log, f"{version:020d}.json"), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def open_data(self, path: str) -> Any:
        return os.path.join(self.root, path)


class _S3Files(_Files):
    def __init__(self, uri: str, aws: AwsSection) -> None:
        parsed = urlparse(uri)
        self.bucket, self.prefix = parsed.netloc, parsed.path.strip("/")
        self.s3 = client("s3", aws)

    def _key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    def versions_after(self, after: int, limit: int) -> list[int]:
        """One ListObjectsV2 page from `after`'s commit file on (more only if the page ran out
        before `limit` commit files: checkpoints and checksums share the folder)."""
        log_prefix = self._key("_delta_log/")
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": log_prefix}
        if after >= 0:
            kwargs["StartAfter"] = f"{log_prefix}{after:020d}.json"
        found: list[int] = []
        while True:
            page = self.s3.list_objects_v2(**kwargs)
            found += _versions((o["Key"][len(log_prefix):] for o in page.get("Contents", [])), after, limit)
            if len(found) >= limit or not page.get("IsTruncated"):
                return found[:limit]
            kwargs["ContinuationToken"] = page["NextContinuationToken"]

    def commit_file(self, version: int) -> bytes | None:
        try:
            got = self.s3.get_object(Bucket=self.bucket, Key=self._key(f"_delta_log/{version:020d}.json"))
        except ClientError as exc:
            if str(exc.response.get("Error", {}).get("Code")) in ("NoSuchKey", "404"):
                return None
            raise
        return bytes(got["Body"].read())

    def open_data(self, path: str) -> Any:
        return io.BytesIO(self.s3.get_object(Bucket=self.bucket, Key=self._key(path))["Body"].read())


def _files_for(uri: str, aws: AwsSection) -> _Files | None:
    if uri.startswith(("s3://", "s3a://")):
        return _S3Files("s3://" + uri.split("://", 1)[1], aws)
    if uri.startswith("file://"):
        return _LocalFiles(urlparse(uri).path)
    return None if "://" in uri else _LocalFiles(uri)
