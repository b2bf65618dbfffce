"""The loader's operator commands beside `run`: checkpoint show/reset, backfill, status."""
