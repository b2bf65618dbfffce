"""The console names the objects a batch set aside, quarantined records of, or loaded with U+FFFD."""

from __future__ import annotations

import logging

import pytest

from lakeinlet.incremental import batch_warnings
from lakeinlet.incremental.model import Outcome, PlannedObject
from lakeinlet.incremental.ports import ReadBatch
from lakeinlet.logs import _FIELDS as FIELDS
from tests.fakes import T0

pytestmark = pytest.mark.unit


def test_loaded_objects_with_replacement_characters_are_named_with_what_to_do(
        caplog: pytest.LogCaptureFixture) -> None:
    batch = ReadBatch(None, None, {("b", "k0"): 3}, {("b", "k0"): 1}, {}, replaced={("b", "k0"): 2})
    objs = [PlannedObject("b", f"k{i}", None, None, 1, f"e{i}", T0, 0) for i in range(8)]
    outcomes = [Outcome(o, "loaded", batch.note((o.bucket, o.key)), 3) for o in objs]
    assert outcomes[0].reason.startswith("1 malformed records dropped; 2 rows hold U+FFFD")
    assert outcomes[1].reason == ""
    many = [Outcome(o, "loaded", outcomes[0].reason, 3) for o in objs]
    with caplog.at_level(logging.WARNING, logger="lakeinlet"):
        batch_warnings.warn(many, [])
    said = [(r.getMessage(), getattr(r, FIELDS)) for r in caplog.records]
    named = [f["object"] for m, f in said if m == "undecodable bytes loaded as U+FFFD" and "object" in f]
    assert named == [f"s3://b/k{i}" for i in range(batch_warnings.SET_ASIDE_SHOWN)]
    more = {"more": 3, "where": "the ledger (lakeinlet-load status)"}
    assert ("undecodable bytes loaded as U+FFFD", more) in said
