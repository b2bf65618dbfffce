"""A merge (`--merge-key`) as Hudi writes one: an upsert keyed by the merge key, ordered by
--order-by (event-time ordering: an older change never replaces a newer row), deletes marked in
Hudi's own `_hoodie_is_deleted` column."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.hudi.write_options import META_COLUMNS
from lakeinlet.incremental.targets.merging import DELETE

IS_DELETED = "_hoodie_is_deleted"
"""The column whose true value makes Hudi delete the record of its key."""


def keyed_by(section: HudiSection, merge: Merge | None) -> HudiSection:
    """The Hudi settings a merge writes with: its key as the record key, --order-by as the
    ordering field."""
    if merge is None:
        return section
    return dataclasses.replace(section, hudi_record_key=",".join(merge.keys),
                               hudi_ordering_field=merge.order_by)


def merge_options(merge: Merge) -> dict[str, str]:
    """Hudi's merge mode for --order-by: the greatest wins (event time), else the latest write."""
    return {"hoodie.record.merge.mode": "EVENT_TIME_ORDERING" if merge.order_by else "COMMIT_TIME_ORDERING"}


def as_hudi_changes(rows: Any) -> Any:
    """`merging.changes` rows with their delete flag as Hudi's."""
    return rows.withColumnRenamed(DELETE, IS_DELETED)


def with_victims(data: Any, victims: Any, merge: Merge, partition_by: Sequence[str]) -> Any:
    """The batch's changes plus deletes of `victims` (rows of the objects' earlier versions,
    --on-overwrite replace) whose key and partition the batch does not write again."""
    from pyspark.sql import functions as F

    victims = victims.drop(*META_COLUMNS).withColumn(IS_DELETED, F.lit(True))
    if data is None:
        return victims
    same = [*merge.keys, *partition_by]
    victims = victims.join(data.select(*same).distinct(), same, "left_anti")
    return data.unionByName(victims, allowMissingColumns=True)
