"""Entry point for `spark-submit` (absolute imports: the file runs outside its package).

    spark-submit --master yarn $(lakeinlet jars --packages --only s3a --only hudi) \\
        --conf spark.pyspark.python=python3 \\
        incremental/__main__.py run --drain --target-format hudi \\
        --changelog s3://lake/changelog --table s3://lake/orders --source-format json \\
        --schema "order_id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP" --spark-scheme s3a

`lakeinlet jars --packages` prints the `--packages` coordinates (Maven Central) of the groups
named; a table format's session settings (e.g. Hudi's serializer and extension) are set by the
job. On EMR leave `s3a` out (the platform's S3 connector is used) and pass `--spark-scheme s3`.
Locally the same `main` is the console script `lakeinlet-load`.
"""

from __future__ import annotations

from lakeinlet.incremental.job import main

if __name__ == "__main__":
    raise SystemExit(main())
