"""Job 1, the event source: SQS (S3 notifications) → changelog table."""
