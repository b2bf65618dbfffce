"""lakeinlet: load files that land in S3 into lakehouse tables, driven by S3 event notifications."""

from __future__ import annotations

__version__ = "0.1.0"
