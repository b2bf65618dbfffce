"""Job 2, the incremental loader: changelog table → lakehouse target tables, exactly once."""
