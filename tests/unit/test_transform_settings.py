"""The transform step's settings and start-up refusals without Spark: flags, environment and route
keys; one of SQL or hook; the hook imported and callable; the unrouted record never transforms; a
new table's --partition-by left to the transform's rows; the lineage rule, the one-line causes, the
ledger's reason, and a changed transform said (not refused)."""

from __future__ import annotations

import copy
import logging
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyspark.sql import types as T

from lakeinlet.config import resolve
from lakeinlet.errors import ConfigError
from lakeinlet.incremental import job
from lakeinlet.incremental.model import Checkpoint, Position
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.incremental.read.transform import (
    KEPT,
    LINEAGE_TYPES,
    Refused,
    cause,
    lineage_problem,
    transforming,
)
from lakeinlet.incremental.routes import routes_of, unrouted_config
from lakeinlet.incremental.settings import LoaderConfig, ReadSection, TablesSection
from lakeinlet.incremental.transform_record import TRANSFORM, changed, stamped
from lakeinlet.incremental.transform_settings import Transform, TransformSection
from lakeinlet.incremental.wiring import partition_check

pytestmark = pytest.mark.unit
ONE = "--transform-sql and --transform: give one (a route may set either, not both)"
RUN = ["run", "--changelog", "s3://lake/changelog", "--table", "s3://lake/t"]


def config(*flags: str, environ: dict[str, str] | None = None) -> LoaderConfig:
    return resolve(LoaderConfig, job.build_parser().parse_args([*RUN, *flags]), environ=environ or {})


@pytest.fixture
def hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "my_hooks.py").write_text("LIMIT = 3\ndef shape(df):\n    return df\n")
    (tmp_path / "broken_hooks.py").write_text("import no_such_module_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "my_hooks"
    for name in ("my_hooks", "broken_hooks"):
        sys.modules.pop(name, None)


def test_sql_from_the_flag_or_the_environment_and_the_hook_from_its_flag(hooks: str) -> None:
    sql = "SELECT * FROM source"
    assert config("--transform-sql", sql).transform.step == Transform(sql)
    env = config(environ={"LAKEINLET__TRANSFORM__TRANSFORM_SQL": "SELECT * FROM source"})
    assert env.transform.step == Transform("SELECT * FROM source")
    step = config("--transform", "my_hooks:shape").transform.step
    assert step is not None and step.hook == "my_hooks:shape" and step.function()(5) == 5
    assert config("--transform-sql", "  ").transform.step is None  # empty: no transform


@pytest.mark.parametrize(("hook", "said"), [
    ("my_hooks.shape", "--transform: expected module:function (e.g. shaping.flatten), found "
                       "'my_hooks.shape'"),
    ("nowhere_at_all:f", "--transform nowhere_at_all:f: module 'nowhere_at_all' cannot be imported "
                         "(ModuleNotFoundError: No module named 'nowhere_at_all'); put it on the "
                         "driver's PYTHONPATH"),
    ("broken_hooks:f", "module 'broken_hooks' cannot be imported (ModuleNotFoundError: No module named "
                       "'no_such_module_anywhere')"),
    ("my_hooks:missing", "--transform my_hooks:missing: 'missing' in module 'my_hooks' is not found"),
    ("my_hooks:LIMIT", "--transform my_hooks:LIMIT: 'LIMIT' in module 'my_hooks' is not a function "
                       "(it is int)"),
])
def test_a_hook_that_cannot_run_is_refused_at_start_in_one_line(hooks: str, hook: str, said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        config("--transform", hook)
    assert len(refused.value.problems) == 1 and "\n" not in refused.value.problems[0]
    assert said in refused.value.problems[0]


def test_sql_and_hook_together_are_refused_for_the_run_and_for_a_route(hooks: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as both:
        config("--transform-sql", "SELECT * FROM source", "--transform", "my_hooks:shape")
    assert both.value.problems == [ONE]
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nname = "a"\ntable = "s3://lake/a"\ntransform_sql = "SELECT * FROM source"\n'
                      '[[route]]\nname = "b"\ntable = "s3://lake/b"\ntransform = "my_hooks:nope"\n')
    with pytest.raises(ConfigError) as per_route:
        routes_of(config("--routes", str(routes), "--transform", "my_hooks:shape"))
    assert per_route.value.problems == [
        f"route a: {ONE}",
        "route b: --transform my_hooks:nope: 'nope' in module 'my_hooks' is not found"]
    good = routes_of(_one_route(tmp_path))
    assert good[0].config.transform.step == Transform("SELECT 1 AS x FROM source")
    assert unrouted_config(config("--routes", str(tmp_path / "one.toml"), "--transform-sql",
                                  "SELECT * FROM source")).transform.step is None


def _one_route(tmp_path: Path) -> LoaderConfig:
    path = tmp_path / "one.toml"
    path.write_text('[[route]]\nname = "a"\ntable = "s3://lake/a"\n'
                    'transform_sql = "SELECT 1 AS x FROM source"\n')
    return config("--routes", str(path))


def test_a_new_tables_partition_column_may_come_from_the_transform() -> None:
    cfg = LoaderConfig(tables=TablesSection(changelog="s3://l/c", table="s3://l/t", partition_by=("region",)),
                       read=ReadSection(schema="id BIGINT", partition_columns="none"))
    no_table = SimpleNamespace(schema=lambda: None)
    with pytest.raises(ConfigError, match="region"):
        partition_check(cfg, no_table)
    shaped = replace(cfg, transform=TransformSection("SELECT 1 FROM source"))
    partition_check(shaped, no_table)  # the rows the transform makes decide


def test_the_lineage_rule_and_what_a_failure_line_quotes() -> None:
    kept = T.StructType([T.StructField("x", T.StringType()), *LINEAGE_TYPES.fields])
    assert lineage_problem(kept, kept) is None
    dropped = T.StructType([f for f in kept.fields if f.name != "_source_etag"])
    assert (lineage_problem(dropped, kept) or "").startswith(
        "it drops the lineage column _source_etag: pass it")
    retyped = T.StructType([T.StructField(f.name, T.StringType()) for f in kept.fields])
    assert lineage_problem(retyped, kept) == (
        "it changes lineage columns' types (_source_event_time is string, not timestamp): pass them as "
        "they are")
    assert KEPT[-1] == "_ingest_batch"
    worker = Exception("\n  An exception was thrown from the Python worker.\n"
                       'Traceback (most recent call last):\n  File "x.py", line 2, in f\n'
                       '    raise ValueError("bad row")\nValueError: bad row\n')
    assert cause(worker) == "ValueError: bad row"
    assert cause(KeyError("user")) == "KeyError: 'user'"
    assert cause(Refused("it drops x")) == "it drops x"


def test_the_ledger_reason_says_the_rows_written_when_they_are_not_the_rows_read() -> None:
    batch = ReadBatch(None, None, {("b", "k"): 1, ("b", "j"): 2}, {}, {},
                      written={("b", "k"): 3, ("b", "j"): 2})
    assert batch.note(("b", "k")) == "the transform wrote 3 rows of the 1 read"
    assert batch.note(("b", "j")) == ""
    assert ReadBatch(None, None, {("b", "k"): 1}, {}, {}).note(("b", "k")) == ""


def test_a_changed_transform_is_said_once_at_start_never_refused(caplog: pytest.LogCaptureFixture) -> None:
    sql = Transform("SELECT *  FROM\n source")
    ck = Checkpoint(Position(3), 7, transform="SELECT * FROM source")
    assert changed(ck, sql) is None  # the same query, spaced otherwise
    assert changed(replace(ck, transform=None), Transform(hook="m:f")) is None  # recorded before this version
    assert changed(replace(ck, position=None), Transform(hook="m:f")) is None  # never loaded
    assert changed(ck, None, "orders") == (
        "route orders: the transform changed since the checkpoint's commit (was 'SELECT * FROM source', "
        "now '(none)'): rows loaded before keep the shape the earlier one gave them")
    with caplog.at_level(logging.WARNING, logger="lakeinlet"):
        meta = stamped({"filters": "{}"}, ck, Transform(hook="m:f"))
    assert meta == {"filters": "{}", TRANSFORM: "m:f"}
    assert [r.getMessage() for r in caplog.records] == ["transform changed"]


def test_the_wrapped_reader_still_opens_objects_for_the_column_checks() -> None:
    inner = SimpleNamespace(spark="session", multiline=True, uri=lambda o: f"s3a://b/{o}")
    assert transforming(inner, None) is inner  # no transform: the reader itself
    shaped = transforming(inner, Transform("SELECT * FROM source"))
    assert (shaped.spark, shaped.multiline, shaped.uri("k")) == ("session", True, "s3a://b/k")
    assert copy.copy(shaped).spark == "session"
