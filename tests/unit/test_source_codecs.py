"""Source formats and codecs without Spark: what first bytes and Content-Encoding say against the
key, what each source format asks of the session and of its settings, and the jars printed."""

from __future__ import annotations

import bz2
import gzip
import io
import tarfile
from datetime import UTC, datetime

import pytest

from lakeinlet import jars
from lakeinlet.incremental.model import CORRUPT, PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read import codecs, formats
from lakeinlet.incremental.settings import ReadSection

pytestmark = pytest.mark.unit
ZSTD, LZ4 = b"\x28\xb5\x2f\xfd\x04\x00", b"\x04\x22\x4d\x18\x64\x40"


def _head(first: bytes | None, encoding: str | None = None) -> ObjectHead:
    return ObjectHead(len(first or b""), "e", first=first, content_encoding=encoding)


def _tar(gz: bool) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        t.addfile(tarfile.TarInfo("a.json"), io.BytesIO(b""))
    # mtime 0: the bytes are the test's id, which every xdist worker must collect alike
    return gzip.compress(out.getvalue(), mtime=0) if gz else out.getvalue()


@pytest.mark.parametrize(("key", "first", "encoding", "found"), [
    ("a.json.gz", gzip.compress(b"{}", mtime=0), None, None),
    ("a.json.bz2", bz2.compress(b"{}"), None, None),
    ("a.json.zst", ZSTD, None, None),
    ("a.json.deflate", b"x\x9c", None, None),  # zlib streams have no magic: read by suffix
    ("a.json", b'{"a": 1}', "gzip", None),  # bytes read beat a header that names another codec
    ("firehose-1", gzip.compress(b"{}", mtime=0), None, "gzip-compressed (first bytes 1f8b0800) but its key "
     "does not end in .gz, and Spark picks the codec by the key's suffix: copy it to a key ending .gz"),
    ("a.json", None, "gzip", "gzip-compressed (Content-Encoding gzip) but its key does not end in .gz"),
    ("a.json", bz2.compress(b"{}"), None, "bzip2-compressed (first bytes 425a6839) but its key does "
     "not end in .bz2"),
    ("a.json.lz4", LZ4, None, "lz4 frame-compressed (first bytes 04224d18), which Spark cannot read: "
     "Hadoop's .lz4 codec reads its own block framing"),
    ("a.snappy", b"\xff\x06\x00\x00sNaPpY", None, "snappy frame-compressed"),
    ("a.zip", b"PK\x03\x04\x14\x00", None, "zip-compressed (first bytes 504b0304), which Spark cannot"),
    ("a.tar", _tar(False), None, "tar archive ('ustar' at byte 257)"),
    ("a.tar.gz", _tar(True), None, "tar archive ('ustar' at byte 257)"),
])
def test_codec_verdicts(key: str, first: bytes | None, encoding: str | None, found: str | None) -> None:
    why = codecs.verdict(key, _head(first, encoding))
    assert (why is None) if found is None else (why is not None and found in why)


def test_set_aside_names_the_object_and_leaves_the_others() -> None:
    objs = [PlannedObject("b", k, "e", None, 1, "ev", datetime.now(UTC), 0) for k in ("ok.json.gz", "raw")]
    heads = {("b", "ok.json.gz"): _head(gzip.compress(b"{}")), ("b", "raw"): _head(gzip.compress(b"{}"))}
    out = codecs.set_aside(objs, heads)
    assert list(out) == [("b", "raw")] and out[("b", "raw")][0] == CORRUPT
    assert out[("b", "raw")][1].endswith("(s3://b/raw)")


def test_source_needs_and_settings_problems() -> None:
    assert formats.source_needs("avro").groups == ["avro"]
    assert formats.source_needs("json").conf == {"spark.hadoop.io.compression.codecs": formats.ZSTD}
    assert formats.source_needs("parquet") == formats.SourceNeeds()
    assert formats.problems("xml", {"rowTag": "r"}, "4.1") == []
    assert formats.problems("xml", {}, "4.1") == [
        "--source-format xml: set --read-option rowTag=<element> (the XML element that holds one "
        "row, e.g. rowTag=record)"]
    assert formats.problems("xml", {"rowTag": "r"}, "3.5") == [
        "--source-format xml: Spark 3.5 has no XML reader lakeinlet can use (spark-xml gives rows "
        "no file path to trace them to): run the loader on Spark 4.1 (lakeinlet's spark41 extra)"]
    on_line = ReadSection(source_format="xml", read_option=("rowtag=r",)).validate()
    assert on_line == formats.problems("xml", {"rowtag": "r"}, jars.installed_line())


def test_avro_jars_on_both_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert jars.coordinates("avro", "3.5") == ("org.apache.spark:spark-avro_2.12:3.5.9",)
    assert jars.coordinates("avro", "4.1") == ("org.apache.spark:spark-avro_2.13:4.1.1",)
    for line in ("3.5", "4.1"):
        assert jars.main(["--packages", "--spark", line]) == 0
        assert jars.coordinates("avro", line)[0] in capsys.readouterr().out
