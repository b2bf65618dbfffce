"""The pipeline an operator notebook looks at: named by its parameters or by the jobs' own settings
(`LAKEINLET__…` variables, `LAKEINLET_CONFIG`), resolved as `lakeinlet-load` resolves them; `None`
when nothing names one (the notebook then runs its demo). Reading it changes nothing."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from lakeinlet.aws import AwsSection, client
from lakeinlet.config import resolve
from lakeinlet.incremental.routes import routes_of
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from lakeinlet.observe.targets import freshness_frame, load_batches_frame
from lakeinlet.queues import queue_url_of, read_depths
from lakeinlet.storage import TableLocation

# Each parameter and the environment variables the jobs already read for it, first found wins.
ENV = {"changelog": ("LAKEINLET__TABLES__CHANGELOG", "LAKEINLET__STATUS__CHANGELOG"),
       "table": ("LAKEINLET__TABLES__TABLE",), "routes": ("LAKEINLET__ROUTES__ROUTES",),
       "queue_url": ("LAKEINLET__STATUS__QUEUE_URL", "LAKEINLET__QUEUE__QUEUE_URL"),
       "target_format": ("LAKEINLET__TABLES__TARGET_FORMAT",),
       "endpoint_url": ("LAKEINLET__AWS__ENDPOINT_URL", "AWS_ENDPOINT_URL"),
       "config_file": ("LAKEINLET_CONFIG",)}
NAMING = ("changelog", "table", "routes", "queue_url", "config_file")
"""The parameters that name a pipeline: with none of them given, a notebook runs its demo."""


@dataclass(frozen=True)
class Table:
    """One target table: its route's name ("" for a single table), URI, format, and the settings
    observe's readers need to open it (`ledger`, the Iceberg catalog's)."""

    name: str
    uri: str
    target_format: str = "delta"
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ledger(self) -> str:
        return str(self.options.get("ledger") or TableLocation(self.uri).sibling("_ledger").uri)


@dataclass(frozen=True)
class Pipeline:
    """A changelog, the tables loaded from it, and where to reach them. `flags`: the loader's other
    settings, passed after the ones this value holds (the demo's; a real run takes them from
    `config_file` and the environment, as the jobs do)."""

    changelog: str
    tables: tuple[Table, ...]
    aws: AwsSection = field(default_factory=AwsSection)
    routes: str = ""
    queue_url: str = ""
    config_file: str = ""
    flags: tuple[str, ...] = ()

    def load_flags(self) -> list[str]:
        """`lakeinlet-load` flags for this pipeline's tables (status, checkpoint, backfill)."""
        where = ["--routes", self.routes] if self.routes else [
            "--table", self.tables[0].uri, "--target-format", self.tables[0].target_format]
        return ["--changelog", self.changelog, *where, *self._common(), *self.flags]

    def status_flags(self) -> list[str]:
        """`lakeinlet-load status` flags: `load_flags` and the queue (its DLQ is found from it)."""
        return [*self.load_flags(), *(["--queue-url", self.queue_url] if self.queue_url else [])]

    def poll_status_flags(self) -> list[str]:
        """`lakeinlet-poll status` flags (the queue and the changelog)."""
        return ["--queue-url", self.queue_url, "--changelog", self.changelog, *self._common()]

    def _common(self) -> list[str]:
        endpoint = ["--endpoint-url", self.aws.endpoint_url] if self.aws.endpoint_url else []
        return [*endpoint, *(["--config-file", self.config_file] if self.config_file else [])]

    def describe(self) -> str:
        tables = ", ".join(f"{t.name or 'table'}={t.uri} ({t.target_format})" for t in self.tables)
        return (f"pipeline: changelog {self.changelog}; {tables}; queue {self.queue_url or '-'}; "
                f"endpoint {self.aws.endpoint_url or 'AWS'}")


def given_pipeline(changelog: str = "", table: str = "", routes: str = "", queue_url: str = "",
                   target_format: str = "", endpoint_url: str = "", config_file: str = "",
                   environ: Mapping[str, str] | None = None) -> Pipeline | None:
    """The pipeline the parameters name (a non-empty one wins over its environment variables,
    `ENV`), resolved with the loader's own settings; None when none of `NAMING` is given.

    Raises:
        ConfigError: what the loader would refuse (no changelog, neither a table nor routes, a bad
            routes file), every problem together.
    """
    env = dict(os.environ if environ is None else environ)
    given = {"changelog": changelog, "table": table, "routes": routes, "queue_url": queue_url,
             "target_format": target_format, "endpoint_url": endpoint_url, "config_file": config_file}
    values = {k: given[k] or next((env[n] for n in ENV[k] if env.get(n)), "") for k in ENV}
    if not any(values[k] for k in NAMING):
        return None
    env |= {ENV[k][0]: v for k, v in values.items() if v and k != "queue_url"}
    config = resolve(LoaderConfig, environ=env, toml_path=values["config_file"] or None)
    return Pipeline(config.tables.changelog or "", tables_of(config), config.aws, config.routes.routes or "",
                    values["queue_url"], values["config_file"])


def tables_of(config: LoaderConfig) -> tuple[Table, ...]:
    """The tables a resolved loader config loads: its routes', or its one table."""
    named = [(r.name, r.config) for r in routes_of(config)] if config.routes.enabled else [("", config)]
    return tuple(Table(name, c.tables.table or "", c.tables.target_format, _options(c)) for name, c in named)


def _options(config: LoaderConfig) -> dict[str, Any]:
    default = IcebergSection()
    catalog = {f.name: getattr(config.iceberg, f.name) for f in dataclasses.fields(IcebergSection)
               if getattr(config.iceberg, f.name) != getattr(default, f.name)}
    return catalog | ({"ledger": config.tables.ledger} if config.tables.ledger else {})


# ---- frames over every table of the pipeline --------------------------------------------------------

def tables_frame(pipeline: Pipeline) -> pd.DataFrame:
    """One row per table: rows and objects its load commits recorded, its load batches, and the
    status columns (checkpoint, head, lag, freshness). Metadata and ledger reads; no data file."""
    rows = []
    for t in pipeline.tables:
        batches = load_batches_frame(t.uri, pipeline.aws, t.target_format, **t.options)
        loads = batches[batches.operation == "load"]
        status = freshness_frame(t.uri, pipeline.changelog, pipeline.aws, t.target_format, **t.options)
        rows.append({"name": t.name, "rows_loaded": int(loads.rows.sum()),
                     "objects_loaded": int(loads.loaded.sum()), "load_batches": len(loads),
                     **status.iloc[0].to_dict()})
    return pd.DataFrame(rows)


def batches_frame(pipeline: Pipeline) -> pd.DataFrame:
    """Every table's load batches (`load_batches_frame`), indexed by the table's name."""
    return pd.concat({t.name or "table": load_batches_frame(t.uri, pipeline.aws, t.target_format, **t.options)
                      for t in pipeline.tables}).droplevel(1)


def ledger_frame(pipeline: Pipeline, newest: int = 20) -> pd.DataFrame:
    """The `newest` ledger rows of each table (by changelog version), indexed by the table's name."""
    from lakeinlet.observe.frames import read_table

    sql = ("SELECT key, status, reason, rows, bytes, changelog_version, target_version FROM t "
           f"ORDER BY changelog_version DESC, key LIMIT {int(newest)}")
    return pd.concat({t.name or "table": read_table(t.ledger, pipeline.aws, sql) for t in pipeline.tables})


def dlq_url(pipeline: Pipeline) -> str | None:
    """The pipeline's dead-letter queue, from its queue's RedrivePolicy (None: no queue or none)."""
    if not pipeline.queue_url:
        return None
    sqs = client("sqs", pipeline.aws)
    arn = read_depths(sqs, pipeline.queue_url).dlq_arn
    return queue_url_of(sqs, arn) if arn else None


def reset_point(commits: pd.DataFrame, given: str = "") -> pd.Timestamp:
    """Where a reset goes: `given` (ISO time), else midway between the two commits before the head
    (a reset there re-reads the newest two versions), else the first commit's time."""
    if given:
        point = pd.Timestamp(given)
        return point if point.tzinfo else point.tz_localize("UTC")
    times = commits.sort_values("version").timestamp.reset_index(drop=True)
    return times.iloc[-3] + (times.iloc[-2] - times.iloc[-3]) / 2 if len(times) >= 3 else times.iloc[0]
