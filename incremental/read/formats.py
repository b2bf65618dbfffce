"""Source formats: which are parsed as text (malformed records kept), which are read through
Hadoop's codecs (first bytes judged), what each adds to the session (Avro's jars, a zstd codec),
and on which Spark line XML reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

FORMATS = ("parquet", "json", "csv", "orc", "avro", "text", "xml")
TEXT = ("json", "csv", "xml")
"""Formats Spark parses in PERMISSIVE mode, keeping malformed records apart (`_corrupt_record`)."""
SNIFFED = ("json", "csv", "text", "xml")
"""Formats read through Hadoop's line readers: the codec comes from the key's suffix, so their
first bytes are read with the HEAD and judged (`read.codecs`)."""
ZSTD = "io.airlift.compress.zstd.ZstdCodec"
"""A pure-JVM Hadoop codec for `.zst` from aircompressor, which both Spark lines ship (for ORC):
Hadoop's own ZStandardCodec needs a libhadoop built with zstd, which pyspark's Hadoop lacks. A
codec named in io.compression.codecs is registered after the built-in ones, so it takes `.zst`."""
CODECS = {"spark.hadoop.io.compression.codecs": ZSTD}
AVRO_CLASS = ("org.apache.spark.sql.avro.AvroFileFormat", "spark-avro")
XML_LINES = ("4.1",)
"""Spark lines that read XML: 4.1's built-in reader. Spark 3.5 has none, and Databricks' spark-xml
reads without file metadata (`_metadata`), which every row's lineage is looked up by."""


@dataclass(frozen=True)
class SourceNeeds:
    """What a source format adds to the Spark session: jar groups, settings, proof classes."""

    groups: list[str] = field(default_factory=list)
    conf: dict[str, str] = field(default_factory=dict)
    required: dict[str, tuple[str, str]] = field(default_factory=dict)


def source_needs(source_format: str) -> SourceNeeds:
    """The jar groups, settings and classes `source_format` needs."""
    if source_format == "avro":
        return SourceNeeds(["avro"], {}, {"avro": AVRO_CLASS})
    return SourceNeeds([], dict(CODECS) if source_format in SNIFFED else {})


def problems(source_format: str, options: Mapping[str, str], line: str | None) -> list[str]:
    """What is wrong with the read settings of `source_format` on Spark `line` (empty: nothing)."""
    if source_format != "xml":
        return []
    if line is not None and line not in XML_LINES:
        return [f"--source-format xml: Spark {line} has no XML reader lakeinlet can use (spark-xml "
                "gives rows no file path to trace them to): run the loader on Spark 4.1 "
                "(lakeinlet's spark41 extra)"]
    if "rowtag" not in {k.lower() for k in options}:
        return ["--source-format xml: set --read-option rowTag=<element> (the XML element that "
                "holds one row, e.g. rowTag=record)"]
    return []
