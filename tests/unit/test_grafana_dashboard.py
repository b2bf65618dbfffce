"""The Grafana dashboard sample (docs/samples/grafana-dashboard.json): a dashboard Grafana imports
(title, uid, panels with unique ids on a 24-column grid, a Prometheus data source variable, a `route`
variable), whose PromQL parses and names only the metrics docs/reference/metrics.md documents."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

promql = pytest.importorskip("promql_parser")

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "samples" / "grafana-dashboard.json"
METRICS = ROOT / "docs" / "reference" / "metrics.md"
DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
ROUTE = "__route_variable__"  # what `$route` stands for while parsing: its matcher must carry it
# Grafana's own variables, replaced by what Grafana would put there before PromQL sees the text.
GRAFANA = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$route": ROUTE}
SERIES = {"summary": ("_sum", "_count"), "histogram": ("_sum", "_count", "_bucket")}

pytestmark = pytest.mark.unit


def documented() -> dict[str, str]:
    """Metric name → type, from the reference page's tables."""
    rows = re.findall(r"^\| `(lakeinlet_\w+)` \| (\w+) \|", METRICS.read_text(encoding="utf-8"), re.M)
    assert len(rows) > 20, "the metrics reference page lost its tables"
    return dict(rows)


def queryable(metrics: dict[str, str]) -> set[str]:
    """The series names a query may select: each metric, and a summary's `_sum`/`_count`."""
    return set(metrics) | {name + s for name, kind in metrics.items() for s in SERIES.get(kind, ())}


def exprs(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield panel["title"], target["expr"]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            yield f"variable {var['name']}", var["definition"].removeprefix("label_values(")[:-1] \
                .rsplit(",", 1)[0]


def selectors(expr: str) -> list[Any]:
    """The vector selectors of `expr` once Grafana's variables are filled in (ValueError: bad PromQL)."""
    for var, value in sorted(GRAFANA.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(var, value)
    found: list[Any] = []
    promql.walk(promql.parse(expr),
                lambda n: found.append(n) if isinstance(n, promql.VectorSelector) else None)
    return found


def query_problems(where: str, expr: str, names: set[str]) -> list[str]:
    try:
        found = selectors(expr)
    except ValueError as exc:
        return [f"{where}: PromQL does not parse ({exc}): {expr}"]
    problems = [f"{where}: {s.name} is not in docs/reference/metrics.md"
                for s in found if s.name not in names]
    if not found:
        problems.append(f"{where}: selects no metric: {expr}")
    for s in found:
        routed = [m for m in s.matchers.matchers if m.name == "route"]
        if s.name.startswith("lakeinlet_loader_") and not where.startswith("variable") \
                and [m.value for m in routed] != [ROUTE]:
            problems.append(f'{where}: {s.name} is not filtered by route=~"$route"')
    return problems


def layout_problems(dashboard: dict[str, Any]) -> list[str]:
    problems = [f"missing dashboard field {k}" for k in ("title", "uid", "schemaVersion", "panels",
                                                         "templating") if k not in dashboard]
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    problems += [f"panel id {i} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
    taken: set[tuple[int, int]] = set()
    for p in dashboard.get("panels", []):
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "hwxy") or g["x"] + g["w"] > 24:
            problems.append(f"panel {p.get('title')}: gridPos {g} is not on the 24-column grid")
            continue
        cells = {(g["y"] + dy, g["x"] + dx) for dy in range(g["h"]) for dx in range(g["w"])}
        problems += [f"panel {p['title']} overlaps another"] if cells & taken else []
        taken |= cells
        if p.get("type") != "row":
            refs = [t.get("refId") for t in p.get("targets", [])]
            if not refs or len(set(refs)) != len(refs) or p.get("datasource") != DATASOURCE:
                problems.append(f"panel {p['title']}: needs targets with unique refIds and the "
                                "${DS_PROMETHEUS} data source")
    return problems


def variable_problems(dashboard: dict[str, Any]) -> list[str]:
    by_name = {v["name"]: v for v in dashboard["templating"]["list"]}
    ds, route = by_name.get("DS_PROMETHEUS", {}), by_name.get("route", {})
    problems = [] if (ds.get("type"), ds.get("query")) == ("datasource", "prometheus") \
        else ["no DS_PROMETHEUS data source variable of type prometheus"]
    if route.get("type") != "query" or not route.get("includeAll") or route.get("allValue") != ".*":
        problems.append("no `route` query variable with All (.*): a single table's route is \"\"")
    return problems


def problems(dashboard: dict[str, Any], metrics: dict[str, str]) -> list[str]:
    names = queryable(metrics)
    found = layout_problems(dashboard) + variable_problems(dashboard)
    for where, expr in exprs(dashboard):
        found += query_problems(where, expr, names)
    return found


def load() -> dict[str, Any]:
    return dict(json.loads(DASHBOARD.read_text(encoding="utf-8")))


def test_the_dashboard_imports_and_queries_only_documented_metrics() -> None:
    assert problems(load(), documented()) == []


def test_every_documented_metric_is_on_the_dashboard() -> None:
    shown = {s.name.removesuffix("_sum").removesuffix("_count")
             for _, e in exprs(load()) for s in selectors(e)}
    assert sorted(set(documented()) - shown) == [], "add a panel (or a query) for these metrics"


def test_a_typo_a_broken_bracket_a_lost_route_filter_and_a_reused_id_are_each_found() -> None:
    dashboard, metrics = load(), documented()
    lag = next(p for p in dashboard["panels"]
               if "lakeinlet_loader_lag_events" in json.dumps(p.get("targets")))
    broken = copy.deepcopy(dashboard)
    bad = next(p for p in broken["panels"] if p["id"] == lag["id"])
    bad["targets"][0]["expr"] = bad["targets"][0]["expr"].replace("lag_events", "lag_event")
    assert problems(broken, metrics) == [f"{lag['title']}: lakeinlet_loader_lag_event is not in "
                                         "docs/reference/metrics.md"]
    bad["targets"][0]["expr"] = "sum(rate(lakeinlet_loader_rows_total[5m])"
    assert [p.split(" (")[0] for p in problems(broken, metrics)] == [f"{lag['title']}: PromQL does not parse"]
    bad["targets"][0]["expr"] = "lakeinlet_loader_lag_events"
    assert problems(broken, metrics) == [f'{lag["title"]}: lakeinlet_loader_lag_events is not filtered by '
                                         'route=~"$route"']
    bad["targets"][0]["expr"] = lag["targets"][0]["expr"]
    bad["id"] = dashboard["panels"][0]["id"]
    assert problems(broken, metrics) == [f"panel id {bad['id']} is used twice"]
