"""Routes: many target tables fed by one changelog in one loader process, each table with its own
checkpoint and ledger (exactly once per table, as with one), planned from one read of the changelog."""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakeinlet.config import convert, iter_fields, setting
from lakeinlet.errors import ConfigError
from lakeinlet.incremental.bounds import knowing
from lakeinlet.incremental.merge_settings import MergeSection
from lakeinlet.incremental.plan import Filters
from lakeinlet.incremental.targets import SparkNeeds, spark_needs
from lakeinlet.incremental.transform_settings import TransformSection

PER_ROUTE = ("tables", "read", "transform", "merge", "plan", "run", "hudi", "iceberg")
"""Sections a route may set keys of; the rest (Spark, AWS, logging) is the run's."""
RUN_WIDE = ("changelog", "spark_scheme", "interval_seconds", "backfill_every", "backfill_bucket",
            "max_batches")
"""Settings of those sections that belong to the run, not to one route."""
NAME = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True)
class RoutesSection:
    """Many tables from one changelog: routes, each a table and the keys that feed it."""

    routes: str | None = setting(
        None, "TOML file of `[[route]]` tables, each with a `name` and the settings of its table "
        "(`table`, `target_format`, `partition_by`, `source_format`, `schema`, `prefix`, "
        "`suffix`, `regex`, `transform_sql`, `merge_key`, …: any tables/read/transform/merge/"
        "plan/run/hudi/iceberg key but the run-wide ones); unset keys take this command's own settings. "
        "One run reads the changelog once per batch and commits each table in its own transaction.",
        metavar="FILE")
    route_def: tuple[str, ...] = setting(
        (), "A route on the command line (repeatable), `NAME: key=value; key=value`, e.g. "
        "`orders: table=s3://lake/orders; prefix=orders/`; list values are comma lists.",
        metavar="SPEC", split=False)
    route: tuple[str, ...] = setting(
        (), "Only these routes (comma list; default: every route).", metavar="NAME")
    routes_exclusive: bool = setting(
        False, "Refuse, at start-up, routes whose prefixes and suffixes could both select one key "
        "(a regex is taken to match anything); without it an object two routes select is loaded "
        "into both.")
    route_threads: int = setting(
        1, "Routes whose batches run at the same time, in one Spark session (each still commits "
        "its own table alone). More than 1 overlaps one route's waits (HEADs, commits, Spark job "
        "start) with another's work.")
    unrouted_table: str | None = setting(
        None, "Delta table whose ledger (`<uri>_ledger`) records, once, each object no route "
        "selects (status `unrouted`); the table itself holds only that record's checkpoint. "
        "Default: <changelog>_unrouted.", metavar="URI")

    @property
    def enabled(self) -> bool:
        return bool(self.routes or self.route_def)

    def validate(self) -> list[str]:
        if self.route_threads < 1:
            return [f"--route-threads: expected at least 1, found {self.route_threads}"]
        return []


@dataclass(frozen=True)
class Route:
    name: str
    config: Any
    """The route's whole `LoaderConfig`: the run's settings with the route's keys on top."""

    @property
    def filters(self) -> Filters:
        return Filters.of(self.config.plan, routed=True)


def routes_of(config: Any) -> list[Route]:
    """The routes `config` names (file first, then flags), checked together.

    Raises:
        ConfigError: every problem found (unknown keys, bad values, duplicate names or tables,
            and, with --routes-exclusive, routes that can select one key).
    """
    section: RoutesSection = config.routes
    specs = [*_file_specs(section.routes), *(_flag_spec(text) for text in section.route_def)]
    problems: list[str] = []
    routes = [r for spec, origin in specs if (r := _route(config, spec, origin, problems))]
    names = [r.name for r in routes]
    problems += [f"route {n}: named twice" for n in sorted({n for n in names if names.count(n) > 1})]
    tables = [r.config.tables.table for r in routes]
    problems += [f"table {t}: fed by two routes (a table has one route: use prefix lists)"
                 for t in sorted({t for t in tables if tables.count(t) > 1})]
    problems += [f"--route {n}: no such route (routes: {', '.join(names)})"
                 for n in section.route if n not in names]
    if section.routes_exclusive:
        problems += [f"routes {a.name} and {b.name} can both select one key: --routes-exclusive "
                     "refuses that (make their prefixes or suffixes disjoint)"
                     for i, a in enumerate(routes) for b in routes[i + 1:] if _overlap(a.filters, b.filters)]
    if not routes and not problems:
        problems.append("--routes: the file has no [[route]] table")
    problems += catalog_clashes(selected(routes, section.route))
    if problems:
        raise ConfigError(problems)
    tables = [*(r.config for r in routes), _unrouted(config)]
    return [Route(r.name, knowing(r.config, tables)) for r in routes]


def selected(routes: list[Route], names: tuple[str, ...]) -> list[Route]:
    return [r for r in routes if not names or r.name in names]


def unrouted_config(config: Any) -> Any:
    """The configuration of the unrouted objects' record: a Delta table with its ledger (which
    knows every route's tables as lakeinlet's own)."""
    return knowing(_unrouted(config), [r.config for r in routes_of(config)])


def _unrouted(config: Any) -> Any:
    t = config.tables
    uri = config.routes.unrouted_table or (t.changelog or "").rstrip("/") + "_unrouted"
    tables = dataclasses.replace(t, table=uri, target_format="delta", ledger=None, quarantine=None,
                                 partition_by=())
    return dataclasses.replace(config, transform=TransformSection(), merge=MergeSection(), tables=tables)


def session_needs(configs: list[Any]) -> SparkNeeds:
    """One Spark session for every route: all formats' jar groups and settings (session
    extensions joined); two routes asking one setting of different values is refused
    (`catalog_clashes` says so at start-up)."""
    groups: list[str] = []
    conf: dict[str, str] = {}
    required: dict[str, tuple[str, str]] = {}
    extensions: list[str] = []
    problems = []
    for c in configs:
        needs = spark_needs(c)
        groups += [g for g in needs.groups if g not in groups]
        required |= needs.required
        for key, value in needs.conf.items():
            if key == "spark.sql.extensions":
                extensions += [e for e in value.split(",") if e not in extensions]
            elif conf.setdefault(key, value) != value and not _location_only(key, needs.conf):
                problems.append(f"{key}: routes need both {conf[key]} and {value} ({ONE_CATALOG})")
    if problems:
        raise ConfigError(sorted(set(problems)))
    if extensions:
        conf["spark.sql.extensions"] = ",".join(extensions)
    return SparkNeeds(groups, conf, required)


ONE_CATALOG = ("one Spark session holds one catalog of a name: give the run one shared catalog "
               "(--iceberg-catalog-uri, e.g. jdbc:postgresql://HOST/DB, or jdbc:sqlite:/PATH/catalog.db "
               "on one machine) or each route its own `iceberg_catalog_name`")


def catalog_clashes(routes: list[Route]) -> list[str]:
    """Why the routes cannot share one Spark session (checked at start-up, not at the first batch,
    where it would fail every route): a route whose format's settings cannot be made (an Iceberg
    table on S3 without a catalog URI), or two Iceberg routes that give one catalog name different
    settings (the default: a SQLite file beside each table)."""
    problems, first = [], dict[str, tuple[str, str]]()
    clashed: set[tuple[str, str]] = set()
    for r in routes:
        try:
            conf = spark_needs(r.config).conf
        except ConfigError as exc:
            problems += [f"route {r.name}: {p}" for p in exc.problems]
            continue
        for key, value in conf.items():
            owner, was = first.setdefault(key, (r.name, value))
            if key == "spark.sql.extensions" or was == value or _location_only(key, conf) \
                    or (owner, r.name) in clashed:
                continue
            clashed.add((owner, r.name))
            catalog = key.split(".")[3] if key.startswith("spark.sql.catalog.") else key
            problems.append(f"routes {owner} and {r.name}: both use the Iceberg catalog `{catalog}` with "
                            f"different settings ({key}: {was} vs {value}); {ONE_CATALOG}")
    return problems


def _location_only(key: str, conf: dict[str, str]) -> bool:
    """A catalog's warehouse, which only places tables created without a location: lakeinlet
    gives every table its location (a Hadoop catalog's tables are found by it instead)."""
    catalog = key.rsplit(".", 1)[0]
    return key.endswith(".warehouse") and conf.get(f"{catalog}.type") != "hadoop"


def _file_specs(path: str | None) -> list[tuple[dict[str, Any], str]]:
    if not path:
        return []
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError([f"--routes {path}: not found"]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"--routes {path}: not valid TOML: {exc}"]) from exc
    extra = sorted(set(doc) - {"route"})
    if extra or not isinstance(doc.get("route", []), list):
        found = ", ".join(extra) or "route"
        raise ConfigError([f"--routes {path}: expected only [[route]] tables, found {found}"])
    return [(spec, f"--routes {path} route {i + 1}") for i, spec in enumerate(doc.get("route", []))]


def _flag_spec(text: str) -> tuple[dict[str, Any], str]:
    name, sep, rest = text.partition(":")
    spec: dict[str, Any] = {"name": name.strip()} if sep else {}
    for item in filter(str.strip, rest.split(";")):
        key, eq, value = item.partition("=")
        spec[key.strip()] = value.strip() if eq else None
    return spec, f"--route-def {text!r}"


def _route(config: Any, spec: dict[str, Any], origin: str, problems: list[str]) -> Route | None:
    name = str(spec.get("name") or "")
    if not NAME.match(name):
        problems.append(f"{origin}: expected a name of letters, digits, _ or - (`name = \"orders\"` "
                        f"or `NAME: key=value; …`), found {name!r}")
        return None
    fields = {f.name: f for f in iter_fields(type(config))
              if f.section in PER_ROUTE and f.name not in RUN_WIDE}
    values: dict[str, dict[str, Any]] = {}
    for key, raw in spec.items():
        if key == "name":
            continue
        f = fields.get(key)
        if f is None:
            near = difflib.get_close_matches(key, fields, 1)
            hint = f"did you mean {near[0]!r}?" if near else "a route may set: " + ", ".join(sorted(fields))
            problems.append(f"route {name}: unknown key {key!r} ({hint})")
        elif raw is None:
            problems.append(f"route {name}: {key} has no value (expected {key}=value)")
        else:
            values.setdefault(f.section, {})[key] = convert(f, raw, problems, f"route {name}")
    sections = {s: dataclasses.replace(getattr(config, s), **kw) for s, kw in values.items()}
    routed = dataclasses.replace(config, **sections)
    if not routed.tables.table:
        problems.append(f"route {name}: `table` is required")
    for s in PER_ROUTE:
        check = getattr(getattr(routed, s), "validate", None)
        problems += [f"route {name}: {p}" for p in (check() if check else []) if "--table" not in p]
    return Route(name, routed)


def _overlap(a: Filters, b: Filters) -> bool:
    """Whether some key could pass both routes' prefix and suffix filters (regexes not analysed)."""
    def meet(xs: tuple[str, ...], ys: tuple[str, ...], related: Any) -> bool:
        return not xs or not ys or any(related(x, y) or related(y, x) for x in xs for y in ys)

    return meet(a.prefix, b.prefix, str.startswith) and meet(a.suffix, b.suffix, str.endswith)
