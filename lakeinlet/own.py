"""lakeinlet's own locations (changelog, targets, ledgers, quarantine, cleanup logs, archive): the
objects under them are never an input, so neither job polls, loads or cleans them up."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlparse

S3_SCHEMES = ("s3", "s3a", "s3n")


@dataclass(frozen=True)
class Location:
    """One S3 location: a bucket and a key prefix ending in `/` (empty: the whole bucket)."""

    bucket: str
    prefix: str

    def covers(self, bucket: str, key: str) -> bool:
        return bucket == self.bucket and key.startswith(self.prefix)

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def location(uri: str) -> Location | None:
    """The S3 location of a table or prefix URI (`s3://b/lake/t` covers `lake/t/…`); None for a
    local path, which no S3 event can name."""
    parsed = urlparse(uri)
    if parsed.scheme not in S3_SCHEMES or not parsed.netloc:
        return None
    prefix = parsed.path.lstrip("/")
    return Location(parsed.netloc, prefix.rstrip("/") + "/" if prefix.strip("/") else "")


@dataclass(frozen=True)
class OwnLocations:
    """Where lakeinlet writes: an event or object under any of them is lakeinlet's own."""

    locations: tuple[Location, ...] = ()

    @classmethod
    def of(cls, uris: Iterable[str | None]) -> OwnLocations:
        """From table and prefix URIs (None and local paths are left out, duplicates once)."""
        found = [loc for u in uris if u and (loc := location(u)) is not None]
        return cls(tuple(dict.fromkeys(found)))

    def owner(self, bucket: str, key: str) -> Location | None:
        """The own location that holds `bucket/key`, or None when it is not lakeinlet's."""
        return next((loc for loc in self.locations if loc.covers(bucket, key)), None)

    def __bool__(self) -> bool:
        return bool(self.locations)
