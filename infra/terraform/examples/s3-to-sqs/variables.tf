variable "region" {
  description = "Region of the bucket and the queues (S3 notifies only queues in the bucket's region)."
  type        = string
  default     = "us-east-1"
}

variable "bucket_name" {
  description = "Name of the landing bucket this example creates (globally unique)."
  type        = string
}

variable "name" {
  description = "Name of the event queue (the DLQ is <name>-dlq)."
  type        = string
  default     = "lakeinlet-events"
}

variable "source_prefix" {
  description = "Keys under this prefix are notified and loadable."
  type        = string
  default     = "incoming/"
}

variable "lake_prefix" {
  description = "Prefix of the changelog, target tables and ledgers in the same bucket."
  type        = string
  default     = "lakeinlet/"
}

variable "glue_databases" {
  description = "Glue databases the loader may register its tables in (--catalog glue:<database>.<table>)."
  type        = list(string)
  default     = []
}

variable "sns_fanout" {
  description = "Route the bucket's events through an SNS topic."
  type        = bool
  default     = false
}

variable "restrict_dlq_sources" {
  description = "Only the event queue may use the DLQ (set false against moto, which cannot store it)."
  type        = bool
  default     = true
}

variable "force_destroy" {
  description = "Let destroy delete a bucket that still holds objects (test and demo stacks only)."
  type        = bool
  default     = false
}
