"""What to do about a read error one object causes: Spark's root cause, found in the text, gets
the fix a user needs (the error alone names a Parquet type or a codec, not the way out)."""

from __future__ import annotations

HINTS = (
    ("TIMESTAMP(NANOS", "a nanosecond timestamp column (the default of pandas and pyarrow), which "
     "neither Spark 3.5 nor 4.1 reads as a timestamp: write it in microseconds (pandas: "
     "to_parquet(..., coerce_timestamps='us', allow_truncated_timestamps=True); pyarrow: "
     "pq.write_table(..., coerce_timestamps='us')) and upload it again"),
    ("COLUMN_ALREADY_EXISTS", "the object has two columns whose names differ only in case, which "
     "Spark matches without case: rename one in the object and upload it again, or set --schema"),
    ("not a gzip file", "the object is named .gz but is not gzip: upload it under a name without "
     ".gz, or compressed with gzip"),
    ("nesting depth", "JSON nested deeper than Spark's parser allows (Jackson's limit): flatten "
     "the records and upload the object again"),
    ("BrotliCodec", "Parquet compressed with brotli, for which Spark has no codec: write it with "
     "snappy, zstd, gzip or lz4 and upload it again"),
    ("zStandard", "this Hadoop build cannot decompress zstd (its libhadoop lacks it; Spark 4's "
     "Hadoop 3.4 can): decompress it or use gzip, or run on a Hadoop with native zstd"),
)


def advice(text: str) -> str:
    """`text` (a root cause) followed by what to do about it, when one of HINTS matches."""
    found = [fix for marker, fix in HINTS if marker in text]
    return f"{text} — {found[0]}" if found else text
