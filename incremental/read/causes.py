"""The root cause of a Spark read error, in one line with what to do about it (`hints`)."""

from __future__ import annotations

from lakeinlet.incremental.read import hints


def root_cause(exc: BaseException) -> str:
    """The first line of the innermost Java cause's message (e.g. "... is not a Parquet file.
    Expected magic number ..."), not py4j's "An error occurred while calling o116.load.", with
    what to do about it when `hints` knows."""
    java = getattr(exc, "java_exception", None)
    while java is not None and java.getCause() is not None:
        java = java.getCause()
    if java is not None:
        message = next((ln.strip() for ln in str(java.getMessage()).splitlines() if ln.strip()), "")
        return hints.advice(f"{java.getClass().getSimpleName()}: {message}"[:500])
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    caused = [ln for ln in lines if ln.startswith("Caused by:")]
    return hints.advice((caused[-1][len("Caused by:"):].strip() if caused
                         else (lines[0] if lines else repr(exc)))[:500])
