"""The Hudi target's write options, and the columns and markers its writes rely on."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from lakeinlet.incremental.targets import commits as tc
from lakeinlet.incremental.targets.hudi.settings import HudiSection

META_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                "_hoodie_partition_path", "_hoodie_file_name")
"""The columns Hudi adds to every row."""
DEFAULTS = {
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
    "hoodie.datasource.write.commitmeta.key.prefix": tc.META,
    # Missing columns in a batch are nulls; lakeinlet's reader already cast types to the table's.
    "hoodie.datasource.write.reconcile.schema": "true",
    # Each commit writes new files: no rewrite of earlier small files (cheaper commits, beside a
    # Hudi write with its defaults in `bench/loader_throughput.py`; no file group is touched twice).
    "hoodie.parquet.small.file.limit": "0",
    "hoodie.metadata.enable": "false",
    "hoodie.embed.timeline.server": "false",
    # Keyless tables look nothing up by key: a small bloom filter instead of Hudi's default-sized
    # one in every file's footer.
    "hoodie.index.bloom.num_entries": "1000",
    "hoodie.bloom.index.filter.type": "DYNAMIC_V0",
}
"""lakeinlet's Hudi write options; --hudi-option overrides any of them."""


def write_options(uri: str, partition_by: Sequence[str], section: HudiSection,
                  operation: str) -> dict[str, str]:
    """The write options: lakeinlet's defaults, partitioning, key, then --hudi-option."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", posixpath.basename(uri)) or "lakeinlet"
    opts = DEFAULTS | {"hoodie.table.name": name, "hoodie.datasource.write.operation": operation}
    if partition_by:
        opts |= {"hoodie.datasource.write.partitionpath.field": ",".join(partition_by),
                 "hoodie.datasource.write.hive_style_partitioning": "true"}
    if section.hudi_record_key:
        opts["hoodie.datasource.write.recordkey.field"] = section.hudi_record_key
    if section.hudi_ordering_field:
        opts["hoodie.table.ordering.fields"] = section.hudi_ordering_field
    return opts | dict(kv.split("=", 1) for kv in section.hudi_option)
