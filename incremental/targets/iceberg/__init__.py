"""The Iceberg target: Spark writes through a staging branch, pyiceberg reads the metadata."""
