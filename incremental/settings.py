"""Configuration of the incremental loader: one frozen dataclass of small documented sections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lakeinlet.aws import AwsSection
from lakeinlet.config import missing, setting
from lakeinlet.incremental.bounds import VALID_BUCKET
from lakeinlet.incremental.cleanup import AfterLoad
from lakeinlet.incremental.merge_settings import MergeSection
from lakeinlet.incremental.read.formats import FORMATS
from lakeinlet.incremental.read.formats import problems as format_problems
from lakeinlet.incremental.registry import check_catalog
from lakeinlet.incremental.routes import RoutesSection
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from lakeinlet.incremental.transform_settings import TransformSection
from lakeinlet.logs import LogSection
from lakeinlet.metrics import MetricsSection
from lakeinlet.own import location
from lakeinlet.redact import redact_setting
from lakeinlet.spark import SparkSection


@dataclass(frozen=True)
class TablesSection:
    """Where to read events from and where rows and ledger rows go."""

    changelog: str | None = setting(
        None, "URI of the changelog table written by the event source (s3://… or a local path).",
        required=True,
        metavar="URI")
    table: str | None = setting(
        None, "Required unless routes are given. URI of the target table (s3://… or a local path).",
        metavar="URI")
    target_format: str = setting(
        "delta", "Format of the target table. Every command, the checkpoint, ledger and guarantees "
        "are the same for all three; `hudi` and `iceberg` need their jars (`lakeinlet jars`).",
        choices=("delta", "hudi", "iceberg"))
    ledger: str | None = setting(
        None, "URI of the ingest ledger (Delta); default: <table>_ledger beside the table.",
        metavar="URI")
    partition_by: tuple[str, ...] = setting(
        (), "Target partition columns (comma list); fixed when the table is created. A column "
        "the existing table or --schema lacks is refused at start-up, one the first batch's rows "
        "lack before its write.",
        metavar="COLS")
    column_names: str = setting(
        "check", "A column name the target format cannot store (Hudi: Avro names, "
        "[A-Za-z_][A-Za-z0-9_]*; Delta and Iceberg: any but empty), in a column the table does "
        "not hold yet: `check` sets its object aside (ledger `schema_conflict`, naming the column "
        "and the fix) and loads the rest of the batch. `rename` loads every name outside "
        "[A-Za-z_][A-Za-z0-9_]* under one every format stores, each other character turned into "
        "`_` (`Order ID` → `Order_ID`), so the table can move between formats; an object in which "
        "two columns would become one is set aside.",
        choices=("check", "rename"))
    app_id: str = setting(
        "lakeinlet-loader", "Checkpoint id stored in the target's `txn` action; two loaders "
        "with different ids on one table would each load every object.")
    spark_scheme: str = setting(
        "s3a", "URI scheme Spark uses for S3 (`s3a` with hadoop-aws; `s3` on EMR).",
        choices=("s3a", "s3"))

    catalog: str | None = setting(
        None, "Register the table where query engines look it up: `glue:DATABASE.TABLE` (the AWS "
        "Glue Data Catalog) or `hive:DATABASE.TABLE` (a Hive Metastore, --hive-metastore-uris), "
        "for Delta and Hudi, with the table parameters Athena, Trino and Spark expect: created "
        "after the first commit, updated when the schema changes, Hudi's partitions added; a "
        "failed registration is repaired by the next run and never touches rows. Iceberg tables "
        "live in their own catalog (--iceberg-catalog).",
        metavar="glue|hive:DB.TABLE")
    hive_metastore_uris: str | None = setting(
        None, "With --catalog hive:…: the Hive Metastore's Thrift URIs (`thrift://HOST:9083`, "
        "comma list, as hive.metastore.uris); the metastore must reach the table's file system.",
        metavar="URIS")
    target_file_mb: int = setting(
        128, "Target size of the table's data files in MiB: a batch is written as about one file "
        "per this many bytes of source data (per partition value; a batch of 32 MiB or more by up "
        "to a task per core, each file of at least 16 MiB), and `maintain` rewrites smaller files "
        "into files of this size.", metavar="MB")
    quarantine: str | None = setting(
        None, "URI of the quarantine table (Delta) of malformed JSON/CSV records, each with its "
        "object and line; default: <table>_quarantine beside the table.", metavar="URI")

    @property
    def ledger_uri(self) -> str:
        return self.ledger or (self.table or "").rstrip("/") + "_ledger"

    @property
    def quarantine_uri(self) -> str:
        return self.quarantine or (self.table or "").rstrip("/") + "_quarantine"

    @property
    def target_file_bytes(self) -> int:
        return self.target_file_mb * 1024 * 1024

    def validate(self) -> list[str]:
        return ([missing("--changelog")] if not self.changelog else []) + (
            [f"--target-file-mb: expected at least 1, found {self.target_file_mb}"]
            if self.target_file_mb < 1 else []) + check_catalog(
            self.catalog, self.target_format, self.hive_metastore_uris)


@dataclass(frozen=True)
class ReadSection:
    """How source objects are read: format, reader options, schema."""

    source_format: str = setting(
        "parquet", "Format of the source objects. CSV is read without a header unless "
        "--read-option header=true: Spark's default, under which a header row loads as data and "
        "the columns are _c0, _c1, …. `text`: one row per line, in a column `value`. `xml` needs "
        "--read-option rowTag=<element> and Spark 4.1 (its built-in reader; Spark 3.5 has none "
        "lakeinlet can use). `avro` needs the `avro` jar group. Compressed objects: see the Sources "
        "page (codecs are picked by the key's suffix; the first bytes are checked).", choices=FORMATS)
    read_option: tuple[str, ...] = setting(
        (), "Spark reader option key=value, passed through (repeatable). CSV: header=true when "
        "the first line names the columns (Spark's default is false: the header loads as a row). "
        "JSON/CSV are read as UTF-8 unless `encoding=<charset>` (e.g. ISO-8859-1) says otherwise: "
        "bytes the charset cannot decode load as U+FFFD, and the ledger counts the rows holding it.",
        metavar="KEY=VALUE")
    schema: str | None = setting(
        None, "Explicit schema: a DDL string (`id BIGINT, name STRING`) or a path to a Spark "
        "JSON schema file. Unset: inferred from each batch.", metavar="DDL|FILE")
    schema_hints: str | None = setting(
        None, "Types for some columns, the others inferred (Auto Loader's schemaHints), as DDL: "
        "`price DECIMAL(10,2), ts TIMESTAMP`. JSON, CSV and XML values are cast value by value: a "
        "value that does not cast sets its object aside (`schema_conflict`, naming the column, the "
        "hint and the value's type), or with --on-type-conflict rescue goes to `_rescued_data`. "
        "Parquet, ORC and Avro columns are cast where no value can be lost (int to bigint, an "
        "integer or decimal into a wider decimal, an atomic value to string); an object whose "
        "column holds another type is set aside (or its values rescued) the same way. A hinted "
        "column a batch's files lack is added, null (under --schema-mode strict only when the "
        "table holds it). Refused at start-up: a hint the table's column cannot take, one given "
        "with --schema (put the type there), nested paths (`a.b`: hint the whole column).",
        metavar="DDL")
    partition_columns: str = setting(
        "auto", "Partition values in keys as columns: `auto` adds a column per `name=value` folder "
        "below the folder of the --prefix a key is under (`sales/dt=2026-11-27/x.parquet` gives "
        "`dt`), `none` adds none, `a,b` only those (null where a key lacks one). Values are "
        "strings, Hive-unescaped (%XX), null for an empty value or __HIVE_DEFAULT_PARTITION__; a "
        "column the table holds with another type is cast to it, and an object whose value does "
        "not cast is set aside (`schema_conflict`). A column the rows hold themselves keeps their "
        "values (the key's fills their nulls). Usable in --partition-by.",
        metavar="auto|none|COLS")
    schema_mode: str = setting(
        "evolve", "`evolve`: new columns are added to the table; `strict`: a batch whose schema "
        "differs from the table fails.", choices=("evolve", "strict"))
    on_type_conflict: str = setting(
        "quarantine", "An object whose column types conflict with the table's (e.g. order_id "
        "string where the table has bigint): `quarantine` records it in the ledger as "
        "`schema_conflict` (naming the columns) and loads the rest of the batch; `fail` stops the "
        "run without moving the checkpoint; `rescue` loads every row: a value the table's type "
        "cannot hold (and, under --schema-mode strict, a column the table lacks) is left null in "
        "its column and kept, as text in a JSON object keyed by column name, in a "
        "`_rescued_data` column (the ledger counts the fields rescued per object). Safe "
        "widenings (int→bigint, float→double) are cast.",
        choices=("quarantine", "fail", "rescue"))

    @property
    def options(self) -> dict[str, str]:
        return dict(kv.split("=", 1) for kv in self.read_option)

    def validate(self) -> list[str]:
        problems = [f"--read-option: expected key=value, found {redact_setting(kv)!r}"
                    for kv in self.read_option if "=" not in kv]
        if re.search(r"[=/]", self.partition_columns):  # a folder (dt=1/) where names are asked
            problems.append("--partition-columns: expected auto, none or column names, found "
                            f"{self.partition_columns!r}")
        if self.schema_hints:  # Spark's types, read without a session (pyspark only when asked)
            from lakeinlet.incremental.read.schema_hints import problems as hint_problems

            problems += hint_problems(self.schema_hints, self.schema, self.source_format)
        return problems + format_problems(
            self.source_format, self.options if all("=" in kv for kv in self.read_option) else {},
            _spark_line())


def _spark_line() -> str | None:
    """The installed pyspark's line (None: not known; the session's start names the problem)."""
    from lakeinlet import jars

    try:
        return jars.installed_line()
    except jars.UnsupportedSpark:
        return None


@dataclass(frozen=True)
class PlanSection:
    """What one batch holds and which objects are loaded at all."""

    max_files: int = setting(1000, "Objects per batch (one target commit).")
    max_bytes: int = setting(
        10 * 1024**3, "Bytes per batch; a single object larger than this is recorded as "
        "`too_large` in the ledger and skipped.")
    prefix: tuple[str, ...] = setting((), "Load only keys under these prefixes.", metavar="P")
    suffix: tuple[str, ...] = setting((), "Load only keys ending with these suffixes.", metavar="S")
    regex: str | None = setting(None, "Load only keys matching this regular expression.")
    ignore_prefix: tuple[str, ...] = setting(
        (), "Never load keys under these prefixes (recorded as `filtered`).", metavar="P")
    include_glob: tuple[str, ...] = setting(
        (), "Load only keys matching one of these shell patterns, matched against the whole key "
        "(`*` and `?` match `/` too, `[...]` a set), e.g. `*.json.gz`.", metavar="GLOB", split=False)
    exclude_glob: tuple[str, ...] = setting(
        (), "Never load keys matching one of these shell patterns (recorded as `filtered`), for a "
        "producer's sidecars, e.g. `*ELBAccessLogTestFile` or `*/CloudTrail-Digest/*`.",
        metavar="GLOB", split=False)
    include_hidden: bool = setting(
        False, "Load writers' artefacts too. By default a key with a folder or name below its "
        "--prefix that starts with `_` (unless it holds `=`) or `.`, or ends `._COPYING_` or "
        "`_$folder$`, or a key ending `/`, is recorded `filtered` and never read: Spark's rule for "
        "hidden files, which covers `_temporary/` parts, `_SUCCESS` manifests, `.crc` sidecars, "
        "`.spark-staging-*` and `__magic` folders.")
    head_threads: int = setting(16, "Parallel HEAD requests when checking planned objects.")
    buckets: tuple[str, ...] = setting(
        (), "Buckets whose objects are loaded and cleaned up (repeatable or comma list; default: "
        "any bucket an event names). An object of another bucket is recorded `filtered` (\"bucket "
        "not in --bucket\") and never read; --backfill-bucket is always allowed. `backfill` lists "
        "these buckets (it needs one at least), so a `run` with the same settings loads what it "
        "appends.", flag="--bucket", metavar="BUCKET")
    lake: tuple[str, ...] = setting(
        (), "Locations of lakeinlet's own data (s3://BUCKET/PREFIX, repeatable) besides those this "
        "command names itself (changelog, tables, ledgers, quarantine, cleanup logs, archive): "
        "objects under any of them are recorded `filtered` (\"lakeinlet's own table\"), never "
        "read, backfilled or cleaned up. The Terraform module sets it to the lake's location.",
        metavar="URI")
    on_delete: str = setting(
        "append-only", "What an ObjectRemoved event does. `append-only`: nothing (rows already "
        "loaded stay; the ledger records it as filtered). `remove-rows`: the rows whose "
        "_source_bucket/_source_key match are deleted, in the same commit as the checkpoint "
        "(batches then hold only creations or only removals, in changelog order).",
        choices=("append-only", "remove-rows"))
    on_overwrite: str = setting(
        "append", "What a new version of an object already loaded does. `append`: its rows are "
        "added and the earlier version's rows stay (the ledger records both versions). "
        "`replace`: the earlier versions' rows (matched by _source_bucket/_source_key) are "
        "deleted in the same commit that adds the new version's rows; a new version that is "
        "set aside (corrupt, a schema conflict, missing) replaces nothing.",
        choices=("append", "replace"))

    def validate(self) -> list[str]:
        problems = [f"--{n.replace('_', '-')}: expected at least 1, found {getattr(self, n)}"
                    for n in ("max_files", "max_bytes", "head_threads") if getattr(self, n) < 1]
        problems += [f"--bucket: {b!r} is not a bucket name (letters, digits, '.', '-', '_')"
                     for b in self.buckets if not VALID_BUCKET.match(b)]
        problems += [f"--lake: expected s3://BUCKET[/PREFIX], found {u!r}" for u in self.lake
                     if location(u) is None]
        if self.regex:
            try:
                re.compile(self.regex)
            except re.error as exc:
                problems.append(f"--regex: not a valid regular expression: {exc}")
        return problems


@dataclass(frozen=True)
class RunSection:
    """How long a run lasts and what a first run does."""

    on_missing_checkpoint: str = setting(
        "earliest", "First run (no checkpoint in the target): `earliest` reads the whole "
        "changelog, `latest` starts after its head, `fail` stops with an error.",
        choices=("earliest", "latest", "fail"))
    interval_seconds: float = setting(30.0, "With --continuous: pause between drains.")
    backfill_every: int = setting(
        0, "With --continuous: run a backfill of --backfill-bucket every N drains (0: never).")
    backfill_bucket: str | None = setting(None, "Bucket the periodic backfill lists.")
    max_batches: int = setting(0, "Stop after this many batches (0: no limit).")
    maintain_every: int = setting(
        0, "With --continuous: compact the table's small files, as `lakeinlet-load maintain` does, "
        "after every N committed batches (0: never). It runs between drains, so it never races "
        "this loader's commits; a failed compaction is logged and loading goes on.", metavar="N")

    def validate(self) -> list[str]:
        return ([f"--maintain-every: expected at least 0, found {self.maintain_every}"]
                if self.maintain_every < 0 else [])


@dataclass(frozen=True)
class CleanupSection:
    """What becomes of source objects once loaded (like Auto Loader's cleanSource)."""

    after_load: str = setting(
        "off", "After each drain of `run` (and with `lakeinlet-load cleanup`): `delete` deletes, "
        "`archive:s3://BUCKET/PREFIX` copies to `PREFIX<source bucket>/<source key>` then deletes, "
        "the exact version loaded of each source object the ledger records `loaded` at least "
        "--after-load-retention-hours ago; once each, recorded in `<ledger>_cleanup`. Never an "
        "object filtered, set aside, missing, loaded with malformed records, or overwritten since "
        "its load. Needs S3 permissions on the sources and the archive (docs: \"Cleaning up "
        "sources after load\").",
        metavar="off|delete|archive:S3-URI")
    after_load_retention_hours: float = setting(
        24.0, "Only objects loaded at least this many hours ago are cleaned up (time to query or "
        "reload them from the source).", metavar="H")
    after_load_max_objects: int = setting(
        1000, "Objects one cleanup pass handles at most (the rest wait for the next pass).")
    after_load_threads: int = setting(8, "Objects cleaned up at the same time (parallel S3 calls).")

    @property
    def spec(self) -> AfterLoad:
        return AfterLoad.parse(self.after_load)

    def validate(self) -> list[str]:
        problems = []
        try:
            AfterLoad.parse(self.after_load)
        except ValueError as exc:
            problems.append(str(exc))
        if self.after_load_retention_hours < 0:
            problems.append(f"--after-load-retention-hours: expected at least 0, found "
                            f"{self.after_load_retention_hours}")
        return problems + [f"--{n.replace('_', '-')}: expected at least 1, found {getattr(self, n)}"
                           for n in ("after_load_max_objects", "after_load_threads") if getattr(self, n) < 1]

    def conflicts(self, plan: PlanSection) -> list[str]:
        """Settings that cannot go with a cleanup of the sources."""
        if self.after_load == "off" or plan.on_delete != "remove-rows":
            return []
        return ["--after-load with --on-delete remove-rows: the cleanup's own deletes would arrive as "
                "ObjectRemoved events and remove the rows just loaded"]


@dataclass(frozen=True)
class LoaderConfig:
    """The incremental loader's whole configuration."""

    tables: TablesSection = field(default_factory=TablesSection)
    read: ReadSection = field(default_factory=ReadSection)
    transform: TransformSection = field(default_factory=TransformSection)
    merge: MergeSection = field(default_factory=MergeSection)
    plan: PlanSection = field(default_factory=PlanSection)
    run: RunSection = field(default_factory=RunSection)
    cleanup: CleanupSection = field(default_factory=CleanupSection)
    hudi: HudiSection = field(default_factory=HudiSection)
    iceberg: IcebergSection = field(default_factory=IcebergSection)
    spark: SparkSection = field(default_factory=SparkSection)
    aws: AwsSection = field(default_factory=AwsSection)
    log: LogSection = field(default_factory=LogSection)
    routes: RoutesSection = field(default_factory=RoutesSection)
    metrics: MetricsSection = field(default_factory=MetricsSection)

    def validate(self) -> list[str]:
        slow = [] if self.metrics.health_seconds > self.run.interval_seconds else [
            f"--health-seconds ({self.metrics.health_seconds:g}) must exceed --interval-seconds "
            f"({self.run.interval_seconds:g}): an idle loader beats once a drain"]
        if self.tables.table or self.routes.enabled:
            return slow + self.cleanup.conflicts(self.plan) + self.merge.conflicts(self.hudi)
        return [*slow, missing("--table") + "; or give routes (--routes FILE or --route-def)"]
