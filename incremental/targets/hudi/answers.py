"""What hudi-rs answers, read from its error texts in one place."""

from __future__ import annotations


def no_table(exc: BaseException) -> bool:
    """Whether hudi-rs failed to open a table because there is none there yet: it raises a plain
    error for a missing `hoodie.properties` (the first commit writes it)."""
    text = str(exc)
    return "hoodie.properties" in text or "not found" in text.lower()
