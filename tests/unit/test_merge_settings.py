"""Upserts by key, without Spark: the flags, environment and route keys, the start-up refusals in
one line, the unrouted record never merging, and the MERGE statement Iceberg runs (names quoted,
the newest wins, deletes and inserts guarded)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeinlet.config import resolve
from lakeinlet.errors import ConfigError
from lakeinlet.incremental import job
from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.routes import routes_of, unrouted_config
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.targets.hudi.changes import keyed_by, merge_options
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.hudi.write_options import write_options
from lakeinlet.incremental.targets.merging import merge_sql, quoted

pytestmark = pytest.mark.unit
RUN = ["run", "--changelog", "s3://lake/changelog", "--table", "s3://lake/t"]


def config(*flags: str, environ: dict[str, str] | None = None) -> LoaderConfig:
    return resolve(LoaderConfig, job.build_parser().parse_args([*RUN, *flags]), environ=environ or {})


def test_the_merge_from_flags_the_environment_and_a_route(tmp_path: Path) -> None:
    assert config().merge.spec is None
    assert config("--merge-key", "id,region", "--order-by", "ts", "--delete-when", "Op = 'D'").merge.spec == \
        Merge(("id", "region"), "ts", "Op = 'D'")
    env = config(environ={"LAKEINLET__MERGE__MERGE_KEY": "id", "LAKEINLET__MERGE__ORDER_BY": "ts"})
    assert env.merge.spec == Merge(("id",), "ts")
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nname = "orders"\ntable = "s3://lake/orders"\nmerge_key = ["order_id"]\n'
                      'order_by = "updated_at"\ndelete_when = "Op = \'D\'"\n'
                      '[[route]]\nname = "clicks"\ntable = "s3://lake/clicks"\n')
    found = {r.name: r.config.merge.spec for r in routes_of(config("--routes", str(routes)))}
    assert found == {"orders": Merge(("order_id",), "updated_at", "Op = 'D'"), "clicks": None}
    assert unrouted_config(config("--routes", str(routes), "--merge-key", "id")).merge.spec is None


@pytest.mark.parametrize(("flags", "said"), [
    (["--order-by", "ts"], "--order-by: needs --merge-key (the columns a change applies to)"),
    (["--delete-when", "Op = 'D'"], "--delete-when: needs --merge-key (the columns a change applies to)"),
    (["--merge-key", "id,id"], "--merge-key: a column given twice (id, id)"),
    (["--merge-key", "id; DROP TABLE x"], "--merge-key: expected column names, found 'id; DROP TABLE x'"),
    (["--merge-key", "id", "--order-by", "id"],
     "--order-by id: it is a --merge-key column (a key's changes all share it)"),
    (["--merge-key", "id", "--order-by", "ts desc"], "--order-by: expected a column name, found 'ts desc'"),
    (["--merge-key", "id", "--hudi-record-key", "uuid"],
     "--hudi-record-key uuid with --merge-key id: a merge keys the Hudi table by --merge-key (and orders "
     "it by --order-by): drop --hudi-record-key"),
])
def test_a_merge_that_cannot_run_is_refused_at_start_in_one_line(flags: list[str], said: str) -> None:
    with pytest.raises(ConfigError) as refused:
        config(*flags)
    assert refused.value.problems == [said]


def test_hudi_writes_a_merge_keyed_and_ordered_by_it() -> None:
    merge = Merge(("id", "region"), "ts")
    options = write_options("s3://lake/t", [], keyed_by(HudiSection(), merge), "upsert")
    assert options["hoodie.datasource.write.recordkey.field"] == "id,region"
    assert options["hoodie.table.ordering.fields"] == "ts"
    assert merge_options(merge) == {"hoodie.record.merge.mode": "EVENT_TIME_ORDERING"}
    assert merge_options(Merge(("id",))) == {"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}
    assert keyed_by(HudiSection(hudi_record_key="id"), None) == HudiSection(hudi_record_key="id")


def test_the_iceberg_merge_statement() -> None:
    sql = merge_sql("cat.db.t.branch_b", "changes", Merge(("id",), "ts"), ["id", "name", "ts"])
    assert sql == (
        "MERGE INTO cat.db.t.branch_b t USING changes s ON t.`id` = s.`id` "
        "WHEN MATCHED AND s._lakeinlet_delete AND (t.`ts` IS NULL OR s.`ts` >= t.`ts`) THEN DELETE "
        "WHEN MATCHED AND NOT s._lakeinlet_delete AND (t.`ts` IS NULL OR s.`ts` >= t.`ts`) THEN UPDATE SET "
        "t.`id` = s.`id`, t.`name` = s.`name`, t.`ts` = s.`ts` "
        "WHEN NOT MATCHED AND NOT s._lakeinlet_delete THEN INSERT (`id`, `name`, `ts`) "
        "VALUES (s.`id`, s.`name`, s.`ts`)")
    unordered = merge_sql("t", "s", Merge(("a", "b")), ["a", "b"])
    assert "ON t.`a` = s.`a` AND t.`b` = s.`b` WHEN MATCHED AND s._lakeinlet_delete THEN DELETE" in unordered


@given(st.text(min_size=1, max_size=30))
def test_any_column_name_is_one_quoted_identifier(name: str) -> None:
    q = quoted(name)
    inner = q[1:-1]
    assert q.startswith("`") and q.endswith("`") and inner.replace("``", "") .count("`") == 0
    assert inner.replace("``", "`") == name
