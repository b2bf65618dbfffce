"""Kafka Connect's S3 sink (DefaultPartitioner): `topics/<topic>/partition=<p>/<topic>+<p>+<start
offset, 10 digits>.<ext>`, JSON lines gzipped (`format.class=JsonFormat`, `s3.compression.type=gzip`)
and Avro containers (`AvroFormat`), plus an exactly-once retry that PUTs one file's bytes again."""

from __future__ import annotations

import gzip
from typing import Any

from tests.data.producers.avro import container
from tests.data.producers.corpus import Produced, json_lines, put

PAYMENT = {"type": "record", "name": "Payment", "namespace": "com.example.payments", "fields": [
    {"name": "payment_id", "type": "long"}, {"name": "amount", "type": "double"},
    {"name": "currency", "type": "string"}, {"name": "note", "type": ["null", "string"]}]}


def key(topic: str, partition: int, offset: int, ext: str) -> str:
    return f"topics/{topic}/partition={partition}/{topic}+{partition}+{offset:010d}.{ext}"


def _orders(first: int, n: int, partition: int) -> list[dict[str, Any]]:
    return [{"order_id": i, "customer": f"c{i % 3}", "amount": round(i * 1.25, 2),
             "ts": f"2026-11-27T09:{i:02d}:00Z", "partition": str(partition)}
            for i in range(first, first + n)]


def json_gzip(s3: Any, bucket: str) -> Produced:
    """Topic `orders`: three files over two partitions; the retry re-uploads the first file."""
    files = {key("orders", 0, 0, "json.gz"): _orders(0, 3, 0),
             key("orders", 0, 3, "json.gz"): _orders(3, 2, 0),
             key("orders", 1, 0, "json.gz"): _orders(5, 4, 1)}
    bodies = {k: gzip.compress(json_lines([_value(r) for r in rows])) for k, rows in files.items()}
    first = tuple(put(s3, bucket, k, b) for k, b in bodies.items())
    retried = next(iter(bodies))
    retry = put(s3, bucket, retried, bodies[retried])  # a task retried after the loader ran: same bytes
    return Produced("kafka_orders", (first, (retry,)), tuple(r for rows in files.values() for r in rows),
                    frozenset(files), filtered={retried: "identical content"})


def avro(s3: Any, bucket: str) -> Produced:
    """Topic `payments`: Avro with the null codec (the sink's default) and with deflate."""
    rows = [{"payment_id": i, "amount": i * 10.5, "currency": "EUR" if i % 2 else "USD",
             "note": None if i % 3 else f"note {i}"} for i in range(6)]
    files = {key("payments", 0, 0, "avro"): (rows[:4], "null", 0),
             key("payments", 2, 17, "avro"): (rows[4:], "deflate", 2)}
    events = [put(s3, bucket, k, container(PAYMENT, part, codec)) for k, (part, codec, _) in files.items()]
    expected = [r | {"partition": str(p)} for part, _, p in files.values() for r in part]
    return Produced("kafka_payments", (tuple(events),), tuple(expected), frozenset(files))


def _value(row: dict[str, Any]) -> dict[str, Any]:
    """The record value the sink writes: the partition is in the key, not in the record."""
    return {k: v for k, v in row.items() if k != "partition"}
