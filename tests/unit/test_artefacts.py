"""Writers' artefacts (Spark's hidden-file rule, folder markers, copies in progress) and the glob
filters: set aside as `filtered` with their reason before any HEAD or read, beside the data files of
the same landing zone; `--include-hidden` loads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeinlet.incremental.artefacts import artefact
from lakeinlet.incremental.filter_record import FilterRecord
from lakeinlet.incremental.model import FILTERED
from lakeinlet.incremental.plan import Filters
from lakeinlet.incremental.settings import PlanSection
from tests.unit.test_bounds import config, drain

pytestmark = pytest.mark.unit

DATA = ["out/part-00000-1.c000.json", "out/dt=2026-11-27/region=eu/part-00001.c000.json",
        "out/_dt=1/part-00002.json", "out/x_temporary.json", "out/folder_$folder$.json/part-3.json"]
ARTEFACTS = {  # key → the part its reason names
    "out/_temporary/0/_temporary/attempt_202611270000_0001_m_000000_0/part-00000-1.c000.json": "_temporary",
    "out/_SUCCESS": "_SUCCESS",
    "out/.part-00000-1.c000.json.crc": ".part-00000-1.c000.json.crc",
    "out/__magic_job-7/tasks/attempt_1/__base/part-00000.json.pending": "__magic_job-7",
    "out/.spark-staging-3f2a/dt=2026-11-27/part-00000.json": ".spark-staging-3f2a",
    "hive/.hive-staging_hive_2026-11-27_00-00-00_1/-ext-10000/000000_0": ".hive-staging_hive",
    "out/part-00004.json._COPYING_": "._COPYING_",
    "out/empty_$folder$": "_$folder$",
    "out/logs/": "trailing `/`",  # bounds' rule, before this one
}


def test_artefacts_are_filtered_before_any_head_beside_the_data_files(tmp_path: Path) -> None:
    objects = [("land", k) for k in [*DATA, *ARTEFACTS]]
    ledger, store, reader = drain(config(tmp_path, prefix=("out/", "hive/")), objects)
    assert {k: ledger[("land", k)][0] for k in DATA} == dict.fromkeys(DATA, "loaded")
    for key, part in ARTEFACTS.items():
        status, reason = ledger[("land", key)]
        assert status == FILTERED and part in reason, (key, reason)
    assert "--include-hidden" in ledger[("land", "out/_SUCCESS")][1]
    assert sorted(k for _, k in store.headed) == sorted(DATA) == sorted(k for _, k in reader.read_keys)


def test_include_hidden_loads_them_and_globs_select_and_exclude(tmp_path: Path) -> None:
    objects = [("land", k) for k in ["out/_SUCCESS", "out/a.json", "out/b.csv",
                                      "AWSLogs/1/elasticloadbalancing/ELBAccessLogTestFile"]]
    settings = config(tmp_path, include_hidden=True, include_glob=("*.json", "*/_SUCCESS", "AWSLogs/*"),
                      exclude_glob=("*ELBAccessLogTestFile",))
    ledger, _, _ = drain(settings, objects)
    assert ledger[("land", "out/_SUCCESS")][0] == ledger[("land", "out/a.json")][0] == "loaded"
    assert ledger[("land", "out/b.csv")] == (FILTERED, "key matches no --include-glob")
    assert ledger[("land", "AWSLogs/1/elasticloadbalancing/ELBAccessLogTestFile")] == (
        FILTERED, "key matches --exclude-glob *ELBAccessLogTestFile")


def test_only_the_part_below_the_prefix_folder_is_judged() -> None:
    assert artefact("_raw/2026/a.json", ("_raw/",)) is None
    assert artefact("_raw/2026/a.json", ("_raw/20",)) is None  # a prefix ending mid-name: its folder
    assert artefact("_raw/2026/a.json") is not None  # without the prefix, `_raw` is below it
    assert artefact("_raw/_tmp/a.json", ("_raw/",)) is not None
    assert artefact("x", ("x",)) is None


def test_a_route_records_its_artefacts_and_other_routes_keys_stay_theirs() -> None:
    route = Filters.of(PlanSection(prefix=("out/",)), routed=True)
    assert route.owns("out/_SUCCESS") and route.verdict("b", "out/_SUCCESS")[0] == FILTERED  # type: ignore[index]
    assert not route.owns("other/_SUCCESS")


def test_turning_hidden_files_or_globs_on_is_a_widened_filter() -> None:
    before = FilterRecord.of(PlanSection(exclude_glob=("*.tmp",), include_glob=("*.json",)))
    now = FilterRecord.of(PlanSection(include_hidden=True, include_glob=("*.json", "*.csv")))
    assert before.widened(now) == ["--include-glob *.json → *.json, *.csv", "--exclude-glob *.tmp → (any)",
                                   "--include-hidden off → on"]
    assert FilterRecord.from_json(before.to_json()) == before
    old = '{"format": 1, "buckets": [], "prefix": [], "suffix": [], "regex": null, "ignore_prefix": []}'
    assert FilterRecord.from_json(old) == FilterRecord()  # written before the globs existed


PART = st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1, max_size=12)


@given(st.lists(PART, min_size=1, max_size=5), st.booleans())
def test_a_key_is_an_artefact_exactly_when_one_of_its_parts_is_hidden(parts: list[str], folder: bool) -> None:
    key = "/".join(parts) + ("/" if folder else "")
    hidden = folder or any(p.startswith(".") or (p.startswith("_") and "=" not in p)
                           or p.endswith(("._COPYING_", "_$folder$")) for p in parts)
    assert (artefact(key) is not None) == hidden
    assert (Filters(include_hidden=True).reject(key) is None)
