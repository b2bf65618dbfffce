"""The docs' code samples are files, and each runs here: the routes file a guide shows is read as
`lakeinlet-load --routes` reads it; the Glue job script runs against a stand-in for Glue's library."""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

import pytest

from lakeinlet.config import resolve
from lakeinlet.incremental import job
from lakeinlet.incremental.routes import routes_of
from lakeinlet.incremental.settings import LoaderConfig

pytestmark = pytest.mark.unit
SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples"


def test_the_routes_sample_gives_three_routes_with_their_own_settings() -> None:
    args = job.build_parser().parse_args(["run", "--changelog", "s3://lake/lakeinlet/changelog",
                                          "--routes", str(SAMPLES / "routes.toml")])
    routes = {r.name: r.config for r in routes_of(resolve(LoaderConfig, args, environ={}))}
    assert list(routes) == ["orders", "clicks", "trips"]
    assert routes["orders"].tables.catalog == "glue:sales.orders"
    assert routes["orders"].plan.prefix == ("orders/",) and routes["orders"].tables.partition_by == ("day",)
    assert routes["clicks"].tables.target_format == "hudi"
    assert routes["clicks"].hudi.hudi_record_key == "click_id"
    assert routes["clicks"].read.source_format == "json"
    assert routes["trips"].tables.target_format == "iceberg"
    assert routes["trips"].iceberg.iceberg_catalog == "glue"
    assert routes["trips"].plan.regex == r"^trips/\d{4}/"
    assert routes["trips"].read.source_format == "parquet"  # the command's own setting


def test_the_glue_job_script_hands_its_parameter_to_lakeinlet_load(monkeypatch: pytest.MonkeyPatch) -> None:
    awsglue, utils = types.ModuleType("awsglue"), types.ModuleType("awsglue.utils")

    def get_resolved_options(argv: list[str], names: list[str]) -> dict[str, str]:  # Glue's contract
        return {n: argv[argv.index(f"--{n}") + 1] for n in names}

    utils.getResolvedOptions = get_resolved_options  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "awsglue", awsglue)
    monkeypatch.setitem(sys.modules, "awsglue.utils", utils)
    seen: list[list[str]] = []
    monkeypatch.setattr(job, "main", lambda argv: seen.append(argv) or 0)
    monkeypatch.setattr(sys, "argv", ["script.py", "--JOB_NAME", "load-orders", "--lakeinlet_args",
                                      "run --drain --changelog 's3://lake/change log' --table s3://lake/orders"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(SAMPLES / "glue_job.py"), run_name="__main__")
    assert done.value.code == 0
    assert seen == [["run", "--drain", "--changelog", "s3://lake/change log", "--table", "s3://lake/orders"]]
