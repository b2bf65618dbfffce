"""Reading one batch's objects with Spark, and the per-object checks that set bad ones aside."""
