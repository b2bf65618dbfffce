"""Builds the loader's adapters from configuration (the only place that picks implementations)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lakeinlet.aws import delta_uri
from lakeinlet.changelog import DeltaChangelog
from lakeinlet.incremental.changelog_reader import ChangelogReader
from lakeinlet.incremental.datafiles import filesystem
from lakeinlet.incremental.delta_target import DeltaTarget
from lakeinlet.incremental.ledger import DeltaLedger
from lakeinlet.incremental.loader import Loader
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.incremental.plan import Caps, Filters
from lakeinlet.incremental.settings import LoaderConfig


def spark_uri(uri: str, scheme: str) -> str:
    """The table URI as Spark addresses it (`s3a://` locally, `s3://` on EMR)."""
    for prefix in ("s3://", "s3a://"):
        if uri.startswith(prefix):
            return f"{scheme}://" + uri[len(prefix):]
    return uri


@dataclass
class Parts:
    """The adapters one job run uses."""

    config: LoaderConfig
    changelog: DeltaChangelog
    target: DeltaTarget
    ledger: DeltaLedger
    spark: Any = None

    def store(self) -> S3ObjectStore:
        return S3ObjectStore(self.config.aws, self.config.plan.head_threads)

    def reader(self) -> Any:
        from lakeinlet.incremental.spark_io import SparkReader
        from lakeinlet.spark import get_session

        cfg = self.config
        if self.spark is None:
            groups = ["s3a"] if cfg.tables.spark_scheme == "s3a" else []
            self.spark = get_session(cfg.spark, cfg.aws.endpoint_url, "lakeinlet-load", groups)
        table = cfg.tables.table or ""
        fs, root = filesystem(delta_uri(table), cfg.aws)
        return SparkReader(self.spark, cfg.read, spark_uri(table, cfg.tables.spark_scheme),
                           cfg.tables.spark_scheme, fs, root, cfg.tables.partition_by)

    def loader(self, crash_at: str | None = None) -> Loader:
        cfg = self.config
        reader = None

        def lazy_reader() -> Any:  # Spark starts only when a batch has something to read
            nonlocal reader
            reader = reader or self.reader()
            return reader

        p = cfg.plan
        return Loader(changelog=ChangelogReader(self.changelog), store=self.store(), reader=lazy_reader,
                      target=self.target, ledger=self.ledger, caps=Caps(p.max_files, p.max_bytes),
                      filters=Filters(p.prefix, p.suffix, p.regex, p.ignore_prefix),
                      on_missing_checkpoint=cfg.run.on_missing_checkpoint, crash_at=crash_at)


def build(config: LoaderConfig, spark: Any = None) -> Parts:
    t, aws = config.tables, config.aws
    return Parts(config, DeltaChangelog(t.changelog or "", aws),
                 DeltaTarget(t.table or "", aws, t.app_id, t.partition_by),
                 DeltaLedger(t.ledger_uri, aws, t.app_id), spark)
