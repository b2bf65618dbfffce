"""Builds the loader's adapters from configuration (the only place that picks implementations)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.errors import ConfigError
from lakeinlet.incremental.bounds import Bounded, bounds_of
from lakeinlet.incremental.changelog_reader import ChangelogReader, SharedChangelogReader
from lakeinlet.incremental.cleanup import Cleanup
from lakeinlet.incremental.cleanup_guard import Guard
from lakeinlet.incremental.column_names import missing_partitions, schema_names
from lakeinlet.incremental.filter_record import FilterRecord, Gap, gap_of, stamp
from lakeinlet.incremental.ledger import DeltaCleanupLog, DeltaLedger
from lakeinlet.incremental.loader import Loader
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.incremental.plan import Caps, Filters, KeyFilter
from lakeinlet.incremental.quarantine import DeltaQuarantine
from lakeinlet.incremental.read import formats
from lakeinlet.incremental.read.key_values import wanted
from lakeinlet.incremental.read.staging import Staging
from lakeinlet.incremental.routes import Route, routes_of, session_needs
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.targets import SparkNeeds, build_target, spark_needs
from lakeinlet.incremental.targets.schema import LINEAGE_SCHEMA
from lakeinlet.incremental.transform_record import stamped
from lakeinlet.logs import event
from lakeinlet.own import location
from lakeinlet.storage import TableLocation

if TYPE_CHECKING:
    from lakeinlet.incremental.column_check import CheckedReader
    from lakeinlet.incremental.ports import RegistryPort, Target
    from lakeinlet.incremental.read.reader import SparkReader
    from lakeinlet.incremental.registry import CatalogRef
    from lakeinlet.incremental.registry.entry import TableEntry

log = logging.getLogger(__name__)


@dataclass
class Parts:
    """The adapters one job run uses (Spark starts only when something needs it)."""

    config: LoaderConfig
    changelog: DeltaChangelog
    ledger: DeltaLedger
    quarantine: DeltaQuarantine
    target: Target
    hold: Callable[[], AbstractContextManager[None]] = field(default=nullcontext)
    """What a run holds while it writes the target (see `targets.Built`)."""
    spark: Any = None
    shared_session: Callable[[], Any] | None = None
    """With routes: the one session every route's Parts uses (started on first use)."""
    rows: ChangelogReader | None = None
    """With routes: the changelog reader every route plans from."""
    route: str | None = None
    """The route's name (None: a single table), for the lines that say what to run."""
    _store: S3ObjectStore | None = None
    _partitions: set[tuple[str, ...]] = field(default_factory=set)
    """Hudi partitions this process has registered in the catalog already."""

    def session(self) -> Any:
        """The SparkSession: s3a when objects are read through s3a, plus the target format's."""
        if self.spark is None and self.shared_session is not None:
            self.spark = self.shared_session()
        if self.spark is None:
            self.spark = start_session(self.config, spark_needs(self.config))
        return self.spark

    def close(self) -> None:
        """Release what the run holds in the target (Iceberg's staging branch); a run that never
        started Spark has nothing to release. A failure here is logged, never raised: the run's
        outcome stands, and `vacuum` cleans what is left."""
        if self.spark is None:
            return
        try:
            self.target.release()
        except Exception as exc:  # the batch outcome is decided already
            log.warning("could not release the target's staging state: %s", exc)

    def register(self) -> str | None:
        """Bring the table's catalog entry (--catalog) in step with the table: after each commit,
        and once at the start of a run (which repairs a registration a crash left behind). Returns
        what changed ("created", "updated", "unchanged", "+N partitions"), None without a catalog
        or before the table exists."""
        found = self._catalog()
        if found is None:
            return None
        ref, registry, entry = found
        outcome = registry.sync(ref, entry)
        if entry.fmt.partitions_registered and entry.partition_by:
            values = self.target.catalog_partitions()
            fresh = [v for v in values if tuple(v.values()) not in self._partitions]
            added = registry.add_partitions(ref, entry, fresh)
            self._partitions |= {tuple(v.values()) for v in fresh}
            outcome += f", +{added} partitions" if added else ""
        return outcome

    def catalog_verdict(self) -> tuple[bool | None, str] | None:
        """`status`: None without --catalog; (None, why) before the table's first commit;
        (True, "") when the entry is in step with the table, (False, what differs) when not."""
        if not self.config.tables.catalog:
            return None
        found = self._catalog()
        if found is None:
            return None, "registered after the table's first commit"
        ref, registry, entry = found
        why = registry.out_of_step(ref, entry)
        return (False, why) if why else (True, "")

    def catalog_line(self) -> str | None:
        """`status`: whether the catalog entry is in step with the table."""
        verdict, name = self.catalog_verdict(), self.config.tables.catalog
        if verdict is None:
            return None
        in_step, why = verdict
        if in_step is None:
            return f"catalog:   {name} ({why})"
        return f"catalog:   {name} in step with the table" if in_step else \
            f"catalog:   OUT OF STEP: {why} (the next run repairs it)"

    def _catalog(self) -> tuple[CatalogRef, RegistryPort, TableEntry] | None:
        """The catalog reference, its registry and what it should say of the table (None without
        --catalog, or before the table's first commit).

        Raises:
            ConfigError: the table's format is not one a registry takes.
        """
        t = self.config.tables
        schema = self.target.schema() if t.catalog else None
        if schema is None or not t.catalog:
            return None
        from lakeinlet.incremental.registry import parse_catalog, registry_of
        from lakeinlet.incremental.registry.entry import table_entry

        ref = parse_catalog(t.catalog)
        entry = table_entry(self.target.catalog_format, t.target_format, self.target.uri, schema,
                            t.partition_by)
        return ref, registry_of(ref, self.config.aws, t.hive_metastore_uris), entry

    def store(self) -> S3ObjectStore:
        """One store for the run: the footers its checks read serve the reader's row counts."""
        if self._store is None:
            self._store = S3ObjectStore(self.config.aws, self.config.plan.head_threads,
                                        parquet=self.config.read.source_format == "parquet",
                                        text=self.config.read.source_format in formats.SNIFFED)
        return self._store

    def reader(self) -> SparkReader:
        from lakeinlet.incremental.read.reader import SparkReader

        return SparkReader(self.session(), self.config.read, self.config.tables.spark_scheme,
                           footers=self.store().footers, prefixes=self.config.plan.prefix,
                           staging=self.staging())

    def staging(self) -> Staging | None:
        """Where compressed objects under keys without their codec's suffix are copied to be
        read: beside the ledger (`<ledger>_staging/`), when the ledger is in S3 (else they are
        set aside, with the fix)."""
        where = TableLocation(self.config.tables.ledger_uri).sibling("_staging").uri
        if not where.startswith("s3://"):
            return None
        return Staging(self.store().s3, where, self.config.tables.spark_scheme)

    def record_filters(self) -> Gap | None:
        """Every commit of this run records its filters and transform; versions planned under narrower
        filters are said at start, once (and by `status`, until a reset re-reads them)."""
        ck = self.target.checkpoint()
        meta, gap = stamp(ck, FilterRecord.of(self.config.plan))
        self.target.stamp = stamped(meta, ck, self.config.transform.step, self.route)
        if gap is not None:
            event(log, "filters changed", level=logging.WARNING, line=gap.line(self.route))
        return gap

    def filters_line(self) -> str | None:
        """`status`'s line on versions planned under narrower filters than this run's (None: none)."""
        gap = gap_of(self.target.checkpoint(), FilterRecord.of(self.config.plan))
        return f"filters:   {gap.line(self.route)}" if gap else None

    def loader(self, filters: KeyFilter | None = None, record: bool = True) -> Loader:
        """The loader of this table; `filters` (default: the plan's, which its commits record
        unless `record` is False: `record_filters` reads the checkpoint) within the bounds.

        Raises:
            ConfigError: a --partition-by column that the table, or an explicit --schema, lacks; a
                --transform-sql that cannot run or drops lineage (`read.transform.check_at_start`).
        """
        cfg, t = self.config, self.config.tables
        partition_check(cfg, self.target)
        hint_check(cfg, self.target)
        if cfg.transform.step is not None:  # a SQL transform is analysed at start-up (Spark starts)
            from lakeinlet.incremental.read.transform import check_at_start

            check_at_start(self.session, cfg, self.target.schema())
        reader: CheckedReader | None = None

        def lazy_reader() -> CheckedReader:  # Spark starts only when a batch has something to read
            from lakeinlet.incremental.column_check import CheckedReader
            from lakeinlet.incremental.read.transform import transforming

            nonlocal reader
            reader = reader or CheckedReader(transforming(self.reader(), cfg.transform.step), t.target_format,
                                             t.column_names == "rename", t.partition_by)
            return reader

        p = cfg.plan
        if record and filters is None:
            self.record_filters()
        caps = Caps(p.max_files, p.max_bytes, p.on_delete == "remove-rows", p.on_overwrite == "replace")
        return Loader(changelog=self.rows or ChangelogReader(self.changelog), store=self.store(),
                      reader=lazy_reader, target=self.target, ledger=self.ledger, caps=caps,
                      filters=Bounded(filters or Filters.of(p, routed=cfg.routes.enabled), bounds_of(cfg)),
                      quarantine=self.quarantine,
                      on_missing_checkpoint=cfg.run.on_missing_checkpoint, hold=self.hold)


def partition_check(cfg: LoaderConfig, target: Target) -> None:
    """At start-up, where the columns are known (the table's, else an explicit --schema's): each
    --partition-by column among them (otherwise the reader checks the first batch's rows)."""
    t = cfg.tables
    if not t.partition_by:
        return
    table = target.schema()
    if table is None and cfg.transform.step is not None:  # its rows, not the source's (`transform_check`)
        return
    keys = wanted(cfg.read.partition_columns)  # columns keys may give beside --schema's
    found = ((table.names, "in the table") if table is not None else
             (None if keys is None else schema_names(cfg.read.schema), "in --schema"))
    if table is None and found[0] is not None and keys:
        found = ([*found[0], *keys], "in --schema or --partition-columns")
    if found[0] is not None and (why := missing_partitions(
            t.partition_by, [*found[0], *(c for c in LINEAGE_SCHEMA.names if c not in found[0])], found[1])):
        raise ConfigError([f"table {t.table}: {why}"])


def hint_check(cfg: LoaderConfig, target: Target) -> None:
    """At start-up, --schema-hints against the table's types (not under a transform: the table's
    columns are then the transform's)."""
    if not cfg.read.schema_hints or cfg.transform.step is not None:
        return
    from lakeinlet.incremental.read.hint_casts import against_table
    from lakeinlet.incremental.read.schema_hints import parse

    if problems := against_table(parse(cfg.read.schema_hints), target.schema()):
        raise ConfigError([f"table {cfg.tables.table}: {p}" for p in problems])


def build_cleanup(parts: Parts) -> Cleanup | None:
    """Source cleanup of this table's loaded objects (None with --after-load off).

    Raises:
        ConfigError: a setting of this table (or route) that cannot go with it.
    """
    cfg = parts.config
    c = cfg.cleanup
    if not c.spec.enabled:
        return None
    if problems := c.conflicts(cfg.plan):
        raise ConfigError([f"table {cfg.tables.table}: {p}" for p in problems])
    from lakeinlet.incremental.cleanup_store import S3SourceCleaner

    p, t = cfg.plan, cfg.tables
    routes = routes_of(cfg) if cfg.routes.enabled else []
    every = [r.filters for r in routes] or [Filters.of(p)]
    others = [(r.name, r.filters) for r in routes if r.config.tables.table != t.table]
    cleanup_log = TableLocation(t.ledger_uri).sibling("_cleanup")
    probe = location(cleanup_log.given)  # the scratch object of the store's probe goes in the log's folder
    guard = Guard(bounds_of(cfg).verdict, (probe.bucket, probe.prefix + "_probe/") if probe else None)
    return Cleanup(c.spec, parts.ledger, DeltaCleanupLog(cleanup_log, cfg.aws, t.app_id),
                   S3SourceCleaner(cfg.aws, c.after_load_threads),
                   c.after_load_retention_hours, c.after_load_max_objects,
                   loads=lambda key: any(f.reject(key) is None for f in every),
                   loads_from=lambda bucket: not p.buckets or bucket in p.buckets,
                   shared=lambda key: next((n for n, f in others if f.reject(key) is None), None),
                   threads=c.after_load_threads, guard=guard)


def start_session(cfg: LoaderConfig, needs: SparkNeeds) -> Any:
    """The SparkSession: s3a when objects are read through s3a, plus what the targets need."""
    from lakeinlet.spark import REQUIRED_CLASSES, get_session

    s3a = ["s3a"] if cfg.tables.spark_scheme == "s3a" else []
    required = {g: c for g, c in REQUIRED_CLASSES.items() if g in s3a} | needs.required
    return get_session(cfg.spark, cfg.aws.endpoint_url, "lakeinlet-load", s3a + needs.groups,
                       needs.conf, required)


def build_routes(config: LoaderConfig, routes: list[Route], spark: Any = None) -> list[Parts]:
    """Each route's adapters, sharing one Spark session (every route's formats; started on first
    use, or `spark`) and one changelog reader."""
    rows = SharedChangelogReader(DeltaChangelog(config.tables.changelog or "", config.aws))
    session = spark

    def one_session() -> Any:
        nonlocal session
        if session is None:
            session = start_session(config, session_needs([r.config for r in routes]))
        return session

    out = []
    for route in routes:
        parts = build(route.config)
        parts.shared_session, parts.rows, parts.route = one_session, rows, route.name
        out.append(parts)
    return out


def build(config: LoaderConfig, spark: Any = None, route: str | None = None) -> Parts:
    """Every adapter of one run from its configuration (Spark starts on first use, or `spark`)."""
    t, aws = config.tables, config.aws
    def lazy_session() -> Any:  # the target is built before Parts, which owns the session
        return parts.session()

    built = build_target(config, lazy_session)
    ledger, quarantine = TableLocation(t.ledger_uri), TableLocation(t.quarantine_uri, t.spark_scheme)
    parts = Parts(config, DeltaChangelog(t.changelog or "", aws), DeltaLedger(ledger, aws, t.app_id),
                  DeltaQuarantine(quarantine, aws, t.app_id), built.target, built.hold, spark, route=route)
    return parts
