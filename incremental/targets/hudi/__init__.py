"""The Hudi target: Spark's Hudi datasource writes and commits, hudi-rs reads the timeline, a lease
keeps one writer per table."""
