"""Wide sample objects for the loader benchmarks: taxi-trip-like Parquet rows of 24 columns of mixed
types (timestamps, ints, longs, doubles, decimals, strings, booleans, a date), made with numpy."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lakeinlet.dev.samples import SampleFile  # noqa: E402

MONEY = pa.decimal128(10, 2)
WIDE_SCHEMA = pa.schema([
    ("trip_id", pa.int64()), ("vendor_id", pa.int32()),
    ("pickup_at", pa.timestamp("us", tz="UTC")), ("dropoff_at", pa.timestamp("us", tz="UTC")),
    ("pickup_date", pa.date32()), ("passenger_count", pa.int32()), ("trip_distance", pa.float64()),
    ("rate_code_id", pa.int32()), ("store_and_fwd", pa.bool_()), ("pickup_zone_id", pa.int32()),
    ("dropoff_zone_id", pa.int32()), ("pickup_zone", pa.string()), ("dropoff_borough", pa.string()),
    ("payment_type", pa.string()), ("fare_amount", MONEY), ("extra", MONEY), ("mta_tax", MONEY),
    ("tip_amount", MONEY), ("tolls_amount", MONEY), ("total_amount", MONEY),
    ("congestion_surcharge", pa.float64()), ("airport_fee", pa.float64()), ("shared_ride", pa.bool_()),
    ("driver_id", pa.int64())])
WIDE_SCHEMA_DDL = (
    "trip_id BIGINT, vendor_id INT, pickup_at TIMESTAMP, dropoff_at TIMESTAMP, pickup_date DATE, "
    "passenger_count INT, trip_distance DOUBLE, rate_code_id INT, store_and_fwd BOOLEAN, "
    "pickup_zone_id INT, dropoff_zone_id INT, pickup_zone STRING, dropoff_borough STRING, "
    "payment_type STRING, fare_amount DECIMAL(10,2), extra DECIMAL(10,2), mta_tax DECIMAL(10,2), "
    "tip_amount DECIMAL(10,2), tolls_amount DECIMAL(10,2), total_amount DECIMAL(10,2), "
    "congestion_surcharge DOUBLE, airport_fee DOUBLE, shared_ride BOOLEAN, driver_id BIGINT")
"""WIDE_SCHEMA as Spark reads it (the loader's --schema and the plain side's read schema)."""
ZONES = [f"{a} {b}" for a in ("East", "West", "North", "South", "Upper", "Lower", "Old", "New", "Port",
                              "Fort", "Bay", "Park")
         for b in ("Village", "Heights", "Harbor", "Square", "Gardens", "Terrace", "Hill", "Point",
                   "Flats", "Yards", "Commons", "Landing", "Crossing", "Slope", "Meadows", "Junction",
                   "Station", "Market", "Pier", "Ridge", "Vale", "Court")]
BOROUGHS = ["Manhattan", "Brooklyn", "Queens", "Bronx", "Staten Island", "EWR", "Unknown"]
PAYMENTS = ["credit_card", "cash", "no_charge", "dispute", "unknown", "voided"]
START_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


def _money(cents: np.ndarray) -> pa.Array:
    """DECIMAL(10,2) from whole cents, built from the buffer (a Python Decimal per value is slow)."""
    words = np.zeros((len(cents), 2), dtype=np.int64)  # 128-bit little-endian, non-negative values
    words[:, 0] = cents
    return pa.Array.from_buffers(MONEY, len(cents), [None, pa.py_buffer(words.tobytes())])


def wide_table(file_no: int, rows: int) -> pa.Table:
    """`rows` trips whose `trip_id`s are unique across files, seeded by `file_no`."""
    rng = np.random.default_rng(file_no)
    pickup = START_US + file_no * 600_000_000 + np.sort(rng.integers(0, 3_600_000_000, rows))
    duration = rng.integers(60_000_000, 5_400_000_000, rows)
    fare = rng.integers(300, 15_000, rows)
    extra, tax = rng.choice([0, 50, 100, 250], rows), np.full(rows, 50)
    tip, tolls = (fare * rng.random(rows) * 0.3).astype(np.int64), rng.choice([0, 0, 0, 694, 1338], rows)
    cols = {
        "trip_id": pa.array(np.arange(rows, dtype=np.int64) + file_no * 10_000_000),
        "vendor_id": pa.array(rng.integers(1, 3, rows, dtype=np.int32)),
        "pickup_at": pa.array(pickup, pa.timestamp("us", tz="UTC")),
        "dropoff_at": pa.array(pickup + duration, pa.timestamp("us", tz="UTC")),
        "pickup_date": pa.array((pickup // 86_400_000_000).astype(np.int32), pa.date32()),
        "passenger_count": pa.array(rng.integers(1, 7, rows, dtype=np.int32)),
        "trip_distance": pa.array(np.round(rng.gamma(2.0, 1.8, rows), 2)),
        "rate_code_id": pa.array(rng.choice(np.array([1, 1, 1, 1, 2, 3, 4, 5], dtype=np.int32), rows)),
        "store_and_fwd": pa.array(rng.random(rows) < 0.02),
        "pickup_zone_id": pa.array(rng.integers(1, 266, rows, dtype=np.int32)),
        "dropoff_zone_id": pa.array(rng.integers(1, 266, rows, dtype=np.int32)),
        "pickup_zone": pa.array(ZONES).take(pa.array(rng.integers(0, len(ZONES), rows))),
        "dropoff_borough": pa.array(BOROUGHS).take(pa.array(rng.integers(0, len(BOROUGHS), rows))),
        "payment_type": pa.array(PAYMENTS).take(pa.array(rng.integers(0, len(PAYMENTS), rows))),
        "fare_amount": _money(fare), "extra": _money(extra), "mta_tax": _money(tax),
        "tip_amount": _money(tip), "tolls_amount": _money(tolls),
        "total_amount": _money(fare + extra + tax + tip + tolls + 100),
        "congestion_surcharge": pa.array(rng.choice([0.0, 2.5], rows)),
        "airport_fee": pa.array(rng.choice([0.0, 0.0, 0.0, 1.75], rows)),
        "shared_ride": pa.array(rng.random(rows) < 0.1),
        "driver_id": pa.array(rng.integers(100_000, 999_999, rows)),
    }
    return pa.table(cols, schema=WIDE_SCHEMA)


def make_wide_files(count: int, rows_per_file: int, prefix: str = "wide/",
                    start: int = 0) -> list[SampleFile]:
    """`count` Parquet objects of `rows_per_file` trips (their rows are not kept: `rows` is empty)."""
    files = []
    for n in range(start, start + count):
        sink = io.BytesIO()
        pq.write_table(wide_table(n, rows_per_file), sink)
        files.append(SampleFile(f"{prefix}part-{n:05d}.parquet", "parquet", [], sink.getvalue()))
    return files
