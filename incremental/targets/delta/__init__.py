"""The Delta target: Spark writes Parquet, delta-rs commits the files and the checkpoint."""
