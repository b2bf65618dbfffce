"""The poller's changelog writer: blind appends through `DeltaAppender` (the fast path), delta-rs
(the plain path) for the table's creation, its log checkpoints and what a blind append cannot write."""

from __future__ import annotations

import json
import logging

from deltalake import DeltaTable

from lakeinlet import fast_paths
from lakeinlet.aws import AwsSection
from lakeinlet.changelog.blind_append import DeltaAppender, LogState, TableChanged
from lakeinlet.changelog.log_store import store_for
from lakeinlet.changelog.reader import DeltaChangelog, changelog_table, commit_metadata
from lakeinlet.changelog.schema import CHANGELOG_PARTITION_BY, CHANGELOG_SCHEMA
from lakeinlet.events import ReceivedEvent

log = logging.getLogger(__name__)

WRITER_FEATURES = {"appendOnly", "invariants", "changeDataFeed"}
"""Table features a blind append of valid rows satisfies as they are."""


class OpenDeltaChangelog(DeltaChangelog):
    """A DeltaChangelog whose `append` commits without replaying the log.

    delta-rs creates the table (first commit), writes a log checkpoint every `checkpointInterval`
    versions (read from the table, 100 by default) and writes a batch whenever the table needs
    more than a blind append (a protocol feature, constraint or schema this writer does not know,
    found at start or in another writer's commit). Appends from several pollers, or from this
    writer and delta-rs, share the log safely: each commit is a put-if-absent of the next version.
    """

    def __init__(self, uri: str, aws: AwsSection | None = None) -> None:
        super().__init__(uri, aws)
        self._store = store_for(self.uri, aws or AwsSection())
        self._appender: DeltaAppender | None = None
        self._delta_rs_only = not fast_paths.enabled("blind-append")
        self._conflicts = 0

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        """Commit `rows` as one version with `metadata` (keys prefixed `lakeinlet.`); returns it.
        An empty `rows` commits nothing and returns the head version."""
        if not rows:
            return self.head_version()
        appender = self._ready()
        if appender is None:
            return super().append(rows, metadata)
        try:
            version = appender.append(changelog_table(rows), commit_metadata(rows, metadata))
        except TableChanged as exc:
            self._use_delta_rs(str(exc))
            return super().append(rows, metadata)
        if version > 0 and version % appender.state.checkpoint_interval == 0:
            self._checkpoint(version)
        return version

    @property
    def conflicts(self) -> int:
        """Versions another writer took first, counted by the blind appender (delta-rs's own
        retries, after a fallback, are not counted)."""
        return self._conflicts + (self._appender.conflicts if self._appender else 0)

    def _ready(self) -> DeltaAppender | None:
        """The appender, once the table exists and takes blind appends; None otherwise."""
        if self._appender is None and not self._delta_rs_only:
            state = self._state()
            if state is not None and state.problem:
                self._use_delta_rs(state.problem)
            elif state is not None:
                self._appender = DeltaAppender(self._store, state, self._refresh)
        return self._appender

    def _state(self) -> LogState | None:
        dt = self.table()
        if dt is None:
            return None
        interval = int(dt.metadata().configuration.get("delta.checkpointInterval") or 100)
        return LogState(int(dt.version()), interval, table_problem(dt))

    def _refresh(self) -> LogState:
        state = self._state()
        assert state is not None, "the table existed a moment ago"
        return state

    def _use_delta_rs(self, reason: str) -> None:
        log.warning("changelog %s: writing through delta-rs from now on (%s)", self.uri, reason)
        self._conflicts = self.conflicts
        self._appender, self._delta_rs_only = None, True

    def _checkpoint(self, version: int) -> None:
        """A log checkpoint at `version`, so readers replay at most `interval` commits; a
        failure only costs readers time, so it is logged, not raised."""
        try:
            dt = self.table(version)
            if dt is not None:
                dt.create_checkpoint()
        except Exception as exc:
            log.warning("changelog %s: checkpoint at version %d failed: %s", self.uri, version, exc)


def table_problem(dt: DeltaTable) -> str | None:
    """Why the table needs more than a blind append of changelog rows, or None."""
    protocol, meta = dt.protocol(), dt.metadata()
    features = set(protocol.writer_features or ())
    if protocol.min_reader_version > 1 and (protocol.reader_features or protocol.min_reader_version == 2):
        return f"reader version {protocol.min_reader_version} {protocol.reader_features or ''}"
    if protocol.min_writer_version > 4 and not (protocol.min_writer_version == 7 and
                                                 features <= WRITER_FEATURES):
        return f"writer version {protocol.min_writer_version} with features {sorted(features)}"
    special = [k for k in meta.configuration if k.startswith("delta.constraints.")
               or (k == "delta.columnMapping.mode" and meta.configuration[k] != "none")]
    if special:
        return f"table properties {special}"
    if list(meta.partition_columns) != CHANGELOG_PARTITION_BY:
        return f"partitioned by {meta.partition_columns}, expected {CHANGELOG_PARTITION_BY}"
    fields = json.loads(dt.schema().to_json())["fields"]
    if [f["name"] for f in fields] != CHANGELOG_SCHEMA.names or any(f.get("metadata") for f in fields):
        return "schema differs from this version's changelog schema"
    return None
