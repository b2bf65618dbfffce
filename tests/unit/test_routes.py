"""Routes: parsing and checks of the routes file and flags, planning per route, the unrouted
record, one changelog read for every route, and a failing route that blocks none of the others."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import tests.targets
from lakeinlet.changelog.reader import CommitInfo
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental.changelog_reader import ChangelogReader, SharedChangelogReader
from lakeinlet.incremental.commands.fanout import Fanout, RouteRun
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.plan import Caps, Filters, Unrouted
from lakeinlet.incremental.routes import RoutesSection, routes_of, session_needs
from lakeinlet.incremental.settings import LoaderConfig, TablesSection
from tests.fakes import T0, FakeChangelog, FakeLedger, FakeStore, MemoryTarget, loaded_rows, make
from tests.targets import CRASH_POINTS, crashing

pytestmark = pytest.mark.unit

ROUTES = """
[[route]]
name = "orders"
table = "s3://lake/orders"
prefix = ["orders/", "sales/"]
partition_by = ["day", "region"]

[[route]]
name = "clicks"
table = "s3://lake/clicks"
target_format = "iceberg"
iceberg_catalog_uri = "jdbc:postgresql://db/lake"
source_format = "json"
suffix = [".json"]
"""


def base(tmp_path: Path, text: str = ROUTES, **routes: Any) -> LoaderConfig:
    path = tmp_path / "routes.toml"
    path.write_text(text)
    return LoaderConfig(tables=TablesSection(changelog="s3://lake/changelog", target_format="hudi"),
                        routes=RoutesSection(routes=str(path), **routes))


def test_a_route_takes_its_keys_over_the_commands_settings(tmp_path: Path) -> None:
    orders, clicks = routes_of(base(tmp_path))
    assert (orders.name, orders.config.tables.table, orders.config.tables.target_format) == (
        "orders", "s3://lake/orders", "hudi")  # unset: the command's own --target-format
    assert orders.config.plan.prefix == ("orders/", "sales/")
    assert orders.config.tables.partition_by == ("day", "region")
    assert orders.config.tables.ledger_uri == "s3://lake/orders_ledger"
    assert (clicks.config.tables.target_format, clicks.config.read.source_format) == ("iceberg", "json")
    assert clicks.config.tables.changelog == "s3://lake/changelog"


def test_flag_routes_keep_commas_in_list_values(tmp_path: Path) -> None:
    config = LoaderConfig(tables=TablesSection(changelog="c"), routes=RoutesSection(route_def=(
        "a: table=/t/a; prefix=a/,b/; partition_by=day,region", "b: table=/t/b; prefix=c/")))
    a, b = routes_of(config)
    assert (a.config.plan.prefix, a.config.tables.partition_by, b.config.plan.prefix) == (
        ("a/", "b/"), ("day", "region"), ("c/",))


@pytest.mark.parametrize(("text", "problem"), [
    ('[[route]]\nname = "a"\ntable = "/t/a"\ntabel = "x"', "unknown key 'tabel' (did you mean 'table'?)"),
    ('[[route]]\nname = "a"\ntable = "/t/a"\nchangelog = "x"', "route a: unknown key 'changelog'"),
    ('[[route]]\nname = "a"', "route a: `table` is required"),
    ('[[route]]\nname = "a b"\ntable = "/t"', "expected a name of letters"),
    ('[[route]]\nname = "a"\ntable = "/t"\n[[route]]\nname = "a"\ntable = "/u"', "route a: named twice"),
    ('[[route]]\nname = "a"\ntable = "/t"\n[[route]]\nname = "b"\ntable = "/t"', "table /t: fed by two"),
    ('[[route]]\nname = "a"\ntable = "/t"\ntarget_format = "csv"', "expected one of delta, hudi, iceberg"),
    ('[[route]]\nname = "a"\ntable = "/t"\nmax_files = 0', "route a: --max-files: expected at least 1"),
    ('[other]\nx = 1', "expected only [[route]] tables, found other"),
    ('', "the file has no [[route]] table"),
])
def test_bad_routes_are_refused_at_start_up(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError) as err:
        routes_of(base(tmp_path, text))
    assert problem in str(err.value)


def test_a_selected_route_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--route nope: no such route"):
        routes_of(base(tmp_path, route=("nope",)))


@pytest.mark.parametrize(("a", "b", "refused"), [
    ('prefix = ["x/"]', 'prefix = ["y/"]', False),
    ('prefix = ["x/"]', 'prefix = ["x/2026/"]', True),
    ('prefix = ["x/"]', "", True),
    ('suffix = [".json"]', 'suffix = [".csv"]', False),
    ('prefix = ["x/"]\nsuffix = [".json"]', 'prefix = ["x/"]\nsuffix = [".csv"]', False),
    ('regex = "a"', 'regex = "b"', True),
])
def test_exclusive_routes_refuse_keys_two_routes_can_select(tmp_path: Path, a: str, b: str,
                                                            refused: bool) -> None:
    text = f'[[route]]\nname = "a"\ntable = "/t/a"\n{a}\n[[route]]\nname = "b"\ntable = "/t/b"\n{b}\n'
    routes_of(base(tmp_path, text))  # overlapping routes are allowed without the flag
    if refused:
        with pytest.raises(ConfigError, match="routes a and b can both select one key"):
            routes_of(base(tmp_path, text, routes_exclusive=True))
    else:
        routes_of(base(tmp_path, text, routes_exclusive=True))


def test_the_session_serves_every_routes_format(tmp_path: Path) -> None:
    needs = session_needs([r.config for r in routes_of(base(tmp_path))])
    assert needs.groups == ["hudi", "iceberg"]
    assert needs.conf["spark.sql.extensions"].split(",") == [
        "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"]


def iceberg_routes(tmp_path: Path, *extra: str, **tables: Any) -> LoaderConfig:
    """Two Iceberg routes, a and b (local tables in two folders), each with its `extra` keys."""
    text = "".join(f'[[route]]\nname = "{n}"\ntarget_format = "iceberg"\n'
                   + ("" if "table =" in x else f'table = "/{n}/t"\n') + f"{x}\n"
                   for n, x in zip("ab", extra or ("", ""), strict=True))
    config = base(tmp_path, text)
    return replace(config, tables=replace(config.tables, **tables))


def test_two_iceberg_routes_on_default_catalog_settings_are_refused_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        routes_of(iceberg_routes(tmp_path))  # each a SQLite catalog beside its table, one name
    assert err.value.problems == [
        "routes a and b: both use the Iceberg catalog `lakeinlet` with different settings "
        "(spark.sql.catalog.lakeinlet.uri: jdbc:sqlite:/a/t.catalog.db vs jdbc:sqlite:/b/t.catalog.db); "
        "one Spark session holds one catalog of a name: give the run one shared catalog "
        "(--iceberg-catalog-uri, e.g. jdbc:postgresql://HOST/DB, or jdbc:sqlite:/PATH/catalog.db on one "
        "machine) or each route its own `iceberg_catalog_name`"]
    with pytest.raises(ConfigError, match="routes a and b: both use the Iceberg catalog"):
        routes_of(iceberg_routes(tmp_path, 'iceberg_catalog_uri = "jdbc:sqlite:/a.db"',
                                 'iceberg_catalog_uri = "jdbc:sqlite:/b.db"'))
    with pytest.raises(ConfigError, match="route b: --table s3a://lake/b: an Iceberg table on S3 needs"):
        routes_of(iceberg_routes(tmp_path, "", 'table = "s3://lake/b"'))


def test_iceberg_routes_sharing_a_catalog_or_naming_their_own_share_one_session(tmp_path: Path) -> None:
    shared = iceberg_routes(tmp_path)
    shared = replace(shared, iceberg=replace(shared.iceberg, iceberg_catalog_uri="jdbc:sqlite:/lake.db"))
    needs = session_needs([r.config for r in routes_of(shared)])  # tables in two folders: one catalog
    assert needs.conf["spark.sql.catalog.lakeinlet.uri"] == "jdbc:sqlite:/lake.db"
    named = routes_of(iceberg_routes(tmp_path, 'iceberg_catalog_name = "cat_a"',
                                     'iceberg_catalog_name = "cat_b"'))
    assert session_needs([r.config for r in named]).conf["spark.sql.catalog.cat_b.uri"] == \
        "jdbc:sqlite:/b/t.catalog.db"


def routed(*prefixes: str) -> Filters:
    return Filters(prefix=prefixes, routed=True)


def test_routes_load_their_own_keys_and_record_only_those() -> None:
    changelog = FakeChangelog()
    changelog.add("a", "c", "e")
    changelog.add("b", "d", "f", "-c")
    targets = {n: MemoryTarget() for n in ("ab", "cd", "rest")}
    ledgers = {n: FakeLedger() for n in targets}
    filters = {"ab": routed("a", "b"), "cd": routed("c", "d")}
    for n, f in filters.items():
        make(changelog, targets[n], ledgers[n], filters=f).drain()
    make(changelog, targets["rest"], ledgers["rest"], filters=Unrouted(tuple(filters.values()))).drain()
    assert loaded_rows(targets["ab"]) == {"a": 1, "b": 1}
    assert loaded_rows(targets["cd"]) == {"c": 1, "d": 1}
    assert {o.obj.key for _, o in ledgers["ab"].rows} == {"a", "b"}  # others' keys: no ledger row
    assert Counter((o.obj.key, o.status) for _, o in ledgers["rest"].rows) == {
        ("e", "unrouted"): 1, ("f", "unrouted"): 1}
    assert not loaded_rows(targets["rest"])
    assert all(t.checkpoint().position == Position(1) for t in targets.values())


def test_other_routes_keys_do_not_count_to_a_batchs_caps() -> None:
    changelog = FakeChangelog()
    changelog.add("x1", "x2", "x3", "x4", "a", "b", "c")
    target, ledger = MemoryTarget(), FakeLedger()
    report = make(changelog, target, ledger, filters=routed("a", "b", "c"), caps=Caps(2, 10**6)).run_batch()
    assert report is not None
    assert [o.obj.key for o in report.outcomes] == ["a", "b"]


@dataclass
class CountingChangelog:
    """Commit history and reads of FakeChangelog's versions, counting reads."""

    fake: FakeChangelog
    reads: list[tuple[int, int]] = field(default_factory=list)

    def commits(self, after: int = -1, limit: int | None = None) -> list[CommitInfo]:
        out = [CommitInfo(v, T0, len(rows), {}) for v, rows in enumerate(self.fake.versions) if v > after]
        return out[:limit]

    def read_versions(self, after: int, until: int | None = None) -> pa.Table:
        last = len(self.fake.versions) - 1 if until is None else until
        self.reads.append((after, last))
        return pa.Table.from_pylist([r for rows in self.fake.versions[after + 1:last + 1] for r in rows])

    def head_version(self) -> int:
        return self.fake.head_version()


def drain_routes(reader: Callable[[CountingChangelog], Any]) -> tuple[CountingChangelog, list[MemoryTarget]]:
    """Three routes (two prefixes and the unrouted record) over six versions, each reading
    through `reader(changelog)` (one reader shared, or one each)."""
    fake = FakeChangelog()
    for i in range(6):
        fake.add(f"a{i}", f"c{i}", f"z{i}")
    source = CountingChangelog(fake)
    targets = [MemoryTarget() for _ in range(3)]
    filters = [routed("a"), routed("c"), Unrouted((routed("a"), routed("c")))]
    store = FakeStore({f"{p}{i}": 10 for p in "acz" for i in range(6)})
    loaders = [make(reader(source), t, FakeLedger(), filters=f, caps=Caps(1, 10**6), store=store)
               for t, f in zip(targets, filters, strict=True)]
    Fanout([RouteRun(str(i), loader) for i, loader in enumerate(loaders)], lambda *_: None, 1.0, 10.0
           ).drain(lambda: False)
    assert all(t.checkpoint().position == Position(5) for t in targets)
    assert sorted(loaded_rows(targets[0])) == [f"a{i}" for i in range(6)]
    return source, targets


def test_every_route_plans_from_one_read_of_each_version() -> None:
    shared: list[SharedChangelogReader] = []

    def one(source: CountingChangelog) -> Any:
        shared.append(shared[0] if shared else SharedChangelogReader(source, window=4))  # type: ignore[arg-type]
        return shared[-1]

    alone, _ = drain_routes(lambda source: ChangelogReader(source, window=4))  # type: ignore[arg-type]
    together, _ = drain_routes(one)
    assert len(alone.reads) == 18  # a read per route per batch
    assert len(together.reads) == 6 and shared[0].versions_read == 6  # each version once


class Refusing(MemoryTarget):
    """A target whose commits fail until `fixed` (a schema conflict in `fail` mode, a held lease)."""

    fixed = False
    clock: Callable[[], float] = staticmethod(lambda: 0.0)  # type: ignore[assignment]

    def publish(self, staged: Any) -> int:
        self.attempts = [*getattr(self, "attempts", []), self.clock()]
        if not self.fixed:
            raise TerminalError("commit refused: the table's writer lease is held by another run")
        return super().publish(staged)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failing_route_is_reported_and_blocks_none_of_the_others(threads: int) -> None:
    changelog = FakeChangelog()
    changelog.add("a", "c")
    changelog.add("b", "d")
    ok, bad = MemoryTarget(), Refusing()
    runs = [RouteRun("ok", make(changelog, ok, FakeLedger(), filters=routed("a", "b"), caps=Caps(1, 10**6))),
            RouteRun("bad", make(changelog, bad, FakeLedger(), filters=routed("c", "d")))]
    fan = Fanout(runs, lambda *_: None, 1.0, 10.0, threads=threads)
    fan.drain(lambda: False)
    assert [r.name for r in fan.failed()] == ["bad"]
    assert "writer lease is held" in (runs[1].error or "")
    assert loaded_rows(ok) == {"a": 1, "b": 1} and not loaded_rows(bad)
    assert "route bad: loaded 0 rows in 0 batches; failed: commit refused" in runs[1].line()
    bad.fixed = True
    fan.drain(lambda: False)  # the next run loads what the failed one left
    assert loaded_rows(bad) == {"c": 1, "d": 1} and not fan.failed()


def test_continuous_retries_a_failed_route_after_its_pause() -> None:
    changelog = FakeChangelog()
    changelog.add("a", "c")
    now = [0.0]
    bad = Refusing()
    bad.clock = lambda: now[0]  # type: ignore[method-assign]
    runs = [RouteRun("ok", make(changelog, MemoryTarget(), FakeLedger(), filters=routed("a"))),
            RouteRun("bad", make(changelog, bad, FakeLedger(), filters=routed("c")))]
    fan = Fanout(runs, lambda *_: None, 2.0, 60.0, clock=lambda: now[0])
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds
        bad.fixed = now[0] >= 6

    fan.continuous(lambda: len(pauses) >= 5, pause)
    assert pauses == [2.0] * 5  # the other route's --interval-seconds
    assert bad.attempts == [0.0, 2.0, 6.0]  # retried 2 s after the 1st failure, 4 s after the 2nd
    assert loaded_rows(bad) == {"c": 1}
    assert runs[1].failures == 0 and runs[1].total.batches == 1


def test_summary_add_counts_every_field() -> None:
    from lakeinlet.incremental.loader import Summary

    a, b = Summary(1, 2, 3, Counter(loaded=1), 4, 5, 6, 7), Summary(1, 1, 1, Counter(loaded=2), 1, 1, 1, 1)
    a.add(b)
    assert replace(a) == Summary(2, 3, 4, Counter(loaded=3), 5, 6, 7, 8)


class Killed(BaseException):
    """The whole process dies (nothing in the loader or the fan-out catches it)."""


@pytest.mark.parametrize("step", CRASH_POINTS)
@pytest.mark.parametrize("dies", [False, True], ids=["route-fails", "process-dies"])
def test_a_crash_at_any_step_of_one_route_then_a_rerun_loads_every_table_exactly(
        step: str, dies: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if dies:
        monkeypatch.setattr(tests.targets, "Crash", Killed)
    changelog = FakeChangelog()
    changelog.add("a", "c", "e")
    changelog.add("b", "d", "f", "a#2")
    filters = {"ab": routed("a", "b"), "cd": routed("c", "d")}
    tables = {n: (MemoryTarget(), FakeLedger()) for n in [*filters, "rest"]}
    filters["rest"] = Unrouted((filters["ab"], filters["cd"]))  # type: ignore[assignment]

    def fan(crash: str | None) -> Fanout:
        loaders = {n: make(changelog, t, ledger, filters=filters[n], caps=Caps(2, 10**6))
                   for n, (t, ledger) in tables.items()}
        if crash:
            loaders["cd"] = crashing(loaders["cd"], crash)
        return Fanout([RouteRun(n, loader) for n, loader in loaders.items()], lambda *_: None, 1.0, 10.0)

    first = fan(step)
    if dies:
        with pytest.raises(Killed):
            first.drain(lambda: False)
    else:
        first.drain(lambda: False)
        assert [r.name for r in first.failed()] == ["cd"]
    fan(None).drain(lambda: False)
    # a's second version rides along in a's batch (it does not count to --max-files) and wins
    assert loaded_rows(tables["ab"][0]) == {"a": 1, "b": 1}
    assert {o.obj.etag for _, o in tables["ab"][1].rows if o.obj.key == "a"} == {"etag-a#2"}
    assert loaded_rows(tables["cd"][0]) == {"c": 1, "d": 1}
    for name, (target, ledger) in tables.items():
        refs = Counter(o.obj.ref for _, o in ledger.rows)
        assert set(refs.values()) == {1}, name  # each object version recorded once
        assert target.checkpoint().position == Position(1), name
    assert Counter(o.status for _, o in tables["rest"][1].rows) == {"unrouted": 2}


def test_continuous_calls_after_drain_with_the_drain_count() -> None:
    changelog = FakeChangelog()
    changelog.add("a")
    fan = Fanout([RouteRun("a", make(changelog, MemoryTarget(), FakeLedger(), filters=routed("a")))],
                 lambda *_: None, 1.0, 10.0)
    seen: list[int] = []
    fan.continuous(lambda: len(seen) >= 3, lambda _: None, seen.append)
    assert seen == [1, 2, 3]


def test_the_periodic_backfill_lists_each_routes_prefixes_every_n_drains(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from lakeinlet.incremental.bounds import Bounds
    from lakeinlet.incremental.commands import between_drains

    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(between_drains.bf, "backfill",
                        lambda store, changelog, ledger, bucket, prefix, own: calls.append((bucket, prefix)))
    monkeypatch.setattr(between_drains, "bounds_of", lambda config: Bounds())
    run = SimpleNamespace(backfill_every=2, backfill_bucket="land")

    def route(*prefixes: str) -> Any:
        config = SimpleNamespace(run=run, plan=SimpleNamespace(prefix=prefixes),
                                 tables=SimpleNamespace(table="t"))
        return SimpleNamespace(config=config, store=lambda: None, changelog=None, ledger=None)

    for drains in (1, 2, 3):
        between_drains.backfill_routes([route("a/", "b/"), route()], drains)
    assert calls == [("land", "a/"), ("land", "b/"), ("land", "")]  # the 2nd drain only
