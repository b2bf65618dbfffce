"""lakeinlet's own locations: which bucket/key pairs a table or prefix URI covers."""

from __future__ import annotations

import pytest

from lakeinlet.own import Location, OwnLocations, location

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("uri", "expected"), [
    ("s3://lake/tables/orders", Location("lake", "tables/orders/")),
    ("s3a://lake/tables/orders/", Location("lake", "tables/orders/")),
    ("s3://lake", Location("lake", "")),
    ("s3://lake/", Location("lake", "")),
    ("./lake/orders", None),
    ("/tmp/lake/orders", None),
    ("file:///tmp/lake", None),
])
def test_a_uri_names_its_bucket_and_a_prefix_ending_in_a_slash(uri: str, expected: Location | None) -> None:
    assert location(uri) == expected


def test_a_table_covers_its_own_files_and_not_a_sibling_that_shares_its_name() -> None:
    own = OwnLocations.of(["s3://lake/t", None, "./local", "s3://lake/t"])
    assert own.locations == (Location("lake", "t/"),)
    assert own.owner("lake", "t/_delta_log/00000000000000000000.json") == Location("lake", "t/")
    assert own.owner("lake", "t_ledger/part-0.parquet") is None
    assert own.owner("other", "t/part-0.parquet") is None
    assert own.owner("lake", "t") is None


def test_a_whole_bucket_covers_every_key_and_nothing_is_empty() -> None:
    assert OwnLocations.of(["s3://lake"]).owner("lake", "any/key") is not None
    assert not OwnLocations.of([None, "./x"])
