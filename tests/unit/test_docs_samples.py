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


def test_the_kubernetes_sample_probes_what_its_jobs_serve() -> None:
    """Each container's args are valid settings of its job, and its probes ask the port and the
    file those settings give."""
    yaml = pytest.importorskip("yaml")
    from lakeinlet.sources import job as poll
    from lakeinlet.sources.settings import SourceConfig

    docs = list(yaml.safe_load_all((SAMPLES / "kubernetes.yaml").read_text(encoding="utf-8")))
    jobs = {"lakeinlet-poll": (poll.parsers()[None], SourceConfig),
            "lakeinlet-load": (job.build_parser(), LoaderConfig)}
    for doc in docs:
        [box] = doc["spec"]["template"]["spec"]["containers"]
        parser, config_cls = jobs[box["command"][0]]
        metrics = resolve(config_cls, parser.parse_args(box["args"]), environ={}).metrics
        assert box["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": metrics.port}
        assert (metrics.host, metrics.health_file) == ("0.0.0.0", "/tmp/lakeinlet.alive")
        assert f"find {metrics.health_file} " in box["readinessProbe"]["exec"]["command"][-1]
    assert [d["metadata"]["name"] for d in docs] == ["lakeinlet-poll", "lakeinlet-load"]
