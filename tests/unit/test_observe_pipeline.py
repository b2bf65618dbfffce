"""Which pipeline a notebook looks at: its parameters, else the jobs' own environment variables, else
none (its demo); resolved as the loader resolves its settings, refused as the loader refuses them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from lakeinlet.errors import ConfigError
from lakeinlet.observe.pipeline import Pipeline, Table, given_pipeline, reset_point

pytestmark = pytest.mark.unit


def test_nothing_named_is_the_demo_whatever_else_is_set() -> None:
    assert given_pipeline(environ={}) is None
    assert given_pipeline(target_format="hudi", endpoint_url="http://127.0.0.1:1",
                          environ={"AWS_ENDPOINT_URL": "http://127.0.0.1:2"}) is None


def test_a_parameter_wins_over_its_variable_and_the_rest_comes_from_the_environment() -> None:
    env = {"LAKEINLET__TABLES__CHANGELOG": "s3://lake/env-changelog", "LAKEINLET__TABLES__TABLE": "s3://lake/t",
           "LAKEINLET__TABLES__LEDGER": "s3://lake/led", "LAKEINLET__QUEUE__QUEUE_URL": "https://sqs/q",
           "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    p = given_pipeline(changelog="s3://lake/changelog", environ=env)
    assert p is not None
    assert p == Pipeline("s3://lake/changelog", (Table("", "s3://lake/t", "delta", {"ledger": "s3://lake/led"}),),
                         p.aws, queue_url="https://sqs/q")
    assert p.aws.endpoint_url == "http://127.0.0.1:9" and p.tables[0].ledger == "s3://lake/led"
    assert p.status_flags() == ["--changelog", "s3://lake/changelog", "--table", "s3://lake/t",
                                "--target-format", "delta", "--endpoint-url", "http://127.0.0.1:9",
                                "--queue-url", "https://sqs/q"]
    assert Table("", "s3://lake/orders").ledger == "s3://lake/orders_ledger"


def test_a_routes_file_gives_every_route_its_table_and_format(tmp_path: Path) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nname = "a"\ntable = "s3://lake/a"\n\n[[route]]\nname = "b"\n'
                      'table = "s3://lake/b"\ntarget_format = "hudi"\n', encoding="utf-8")
    p = given_pipeline(changelog="s3://lake/cl", routes=str(routes), environ={})
    assert p is not None
    assert [(t.name, t.uri, t.target_format) for t in p.tables] == [("a", "s3://lake/a", "delta"),
                                                                    ("b", "s3://lake/b", "hudi")]
    assert p.load_flags() == ["--changelog", "s3://lake/cl", "--routes", str(routes)]


def test_a_pipeline_the_loader_would_refuse_is_refused_with_its_reasons(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--changelog: required"):
        given_pipeline(table="s3://lake/t", environ={})
    with pytest.raises(ConfigError, match="--table: required"):
        given_pipeline(queue_url="https://sqs/q", environ={"LAKEINLET__TABLES__CHANGELOG": "s3://lake/cl"})
    with pytest.raises(ConfigError):
        given_pipeline(changelog="s3://lake/cl", routes=str(tmp_path / "missing.toml"), environ={})


def test_the_reset_point_is_given_or_midway_between_the_two_commits_before_the_head() -> None:
    times = pd.to_datetime(["2026-11-27T10:00:00Z", "2026-11-27T10:10:00Z", "2026-11-27T10:30:00Z"], utc=True)
    commits = pd.DataFrame({"version": [0, 1, 2], "timestamp": times})
    assert reset_point(commits) == pd.Timestamp("2026-11-27T10:05:00Z")
    assert reset_point(commits.iloc[:2]) == pd.Timestamp("2026-11-27T10:00:00Z")
    assert reset_point(commits, "2026-11-27T09:00:00") == pd.Timestamp("2026-11-27T09:00:00Z")
