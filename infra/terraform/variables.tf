# Queue settings: names and defaults mirror lakeinlet.queue_settings.QueueSettings field by
# field (the local stack of `lakeinlet local up`); tests/terraform fails when they drift.

variable "name" {
  description = "Name of the event queue; the DLQ is \"<name>-dlq\" and the optional SNS topic \"<name>-topic\"."
  type        = string
  default     = "lakeinlet-events"
}

variable "bucket_name" {
  description = "Existing S3 bucket whose object events feed the queue (the landing bucket)."
  type        = string
}

variable "account_id" {
  description = "Account that owns the bucket (aws:SourceAccount in the queue and topic policies). Null: the caller's account."
  type        = string
  default     = null
}

variable "visibility_timeout_seconds" {
  description = "Queue default visibility timeout. Must exceed the time to commit one poll batch, or messages come back and are read twice (the changelog dedups them by event id, but the work is repeated). lakeinlet-poll also sets it per receive (--visibility-timeout)."
  type        = number
  default     = 300

  validation {
    condition     = var.visibility_timeout_seconds >= 0 && var.visibility_timeout_seconds <= 43200
    error_message = "visibility_timeout_seconds must be 0-43200."
  }
}

variable "receive_wait_time_seconds" {
  description = "Long polling wait of the queue (1-20 s). Long polling on by default: fewer empty receives, lower cost."
  type        = number
  default     = 20

  validation {
    condition     = var.receive_wait_time_seconds >= 1 && var.receive_wait_time_seconds <= 20
    error_message = "receive_wait_time_seconds must be 1-20: lakeinlet expects long polling."
  }
}

variable "message_retention_seconds" {
  description = "How long an event waits for the event source before it is lost (default four days)."
  type        = number
  default     = 345600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "message_retention_seconds must be 60-1209600."
  }
}

variable "max_receive_count" {
  description = "Receives before a message that keeps failing (a poison message) moves to the DLQ."
  type        = number
  default     = 5

  validation {
    condition     = var.max_receive_count >= 1 && var.max_receive_count <= 1000
    error_message = "max_receive_count must be 1-1000."
  }
}

variable "dlq_message_retention_seconds" {
  description = "Retention of the DLQ (default 14 days, the SQS maximum) so operators have time to inspect dead letters. Must not be shorter than message_retention_seconds: a message's age counts from its first enqueue."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be 60-1209600."
  }
}

variable "sqs_managed_sse" {
  description = "Server-side encryption of both queues with SQS-owned keys (SSE-SQS). S3 and SNS can deliver to SSE-SQS queues without any key policy."
  type        = bool
  default     = true
}

variable "restrict_dlq_sources" {
  description = "Attach a redrive allow policy to the DLQ so only the event queue may use it (byQueue). Off only for emulators: moto does not store RedriveAllowPolicy, so the provider waits for it until its create timeout."
  type        = bool
  default     = true
}

variable "event_types" {
  description = "S3 event types sent to the queue. lakeinlet-poll keeps created, removed and lifecycle-expired events (s3:ObjectRemoved:* leaves out deletions by a lifecycle rule) and acknowledges others."
  type        = list(string)
  default     = ["s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:LifecycleExpiration:*"]

  validation {
    condition     = length(var.event_types) > 0 && alltrue([for e in var.event_types : startswith(e, "s3:")])
    error_message = "event_types must be a non-empty list of S3 event types such as s3:ObjectCreated:*."
  }
}

variable "source_prefix" {
  description = "Only keys under this prefix are notified, and the loader may read (and with after_load, clean up) only these keys. Empty: the whole bucket, which the module refuses while the lake is in the landing bucket (the default): the notification would cover lakeinlet's own changelog and tables. Must not nest with lake_prefix or changelog_prefix (one a prefix of the other) in the same bucket."
  type        = string
  default     = ""
}

variable "queue_sender_arns" {
  description = "IAM principals (ARNs, wildcards allowed) that may send to the event queue besides the bucket or topic. Every other IAM principal, of this account or another, is denied sqs:SendMessage there; no lakeinlet job needs it (`lakeinlet-poll --poison dlq` sends to the DLQ). Name, e.g., the role that moves dead letters back with StartMessageMoveTask, which sends as its caller."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.queue_sender_arns : can(regex("^arn:[a-z-]+:iam::[0-9]{12}:", arn))])
    error_message = "queue_sender_arns: IAM principal ARNs such as arn:aws:iam::123456789012:role/dlq-redrive."
  }
}

variable "source_suffix" {
  description = "Only keys ending with this suffix (e.g. \".json\") are notified. Empty: any key."
  type        = string
  default     = ""
}

variable "manage_bucket_notification" {
  description = "Create the bucket notification. An aws_s3_bucket_notification owns the bucket's whole notification configuration: set false when the bucket already has other notifications, and add the queue (output queue_arn) or topic to that configuration instead."
  type        = bool
  default     = true
}

variable "sns_fanout" {
  description = "Route S3 -> SNS topic -> this queue instead of S3 -> queue, so other subscribers can share the bucket's events."
  type        = bool
  default     = false
}

variable "sns_raw_message_delivery" {
  description = "With sns_fanout: deliver the S3 event itself (raw) instead of the SNS envelope. lakeinlet-poll reads both."
  type        = bool
  default     = false
}

variable "sns_kms_master_key_id" {
  description = "With sns_fanout: the topic is always encrypted (SSE-KMS). Null: the module creates a customer-managed key (rotated yearly; about 1 USD a month plus requests, and a 30-day waiting period when destroyed) whose policy lets S3 encrypt for this topic only. Or name your own customer-managed key: its policy must let s3.amazonaws.com use kms:GenerateDataKey and kms:Decrypt. Not the AWS-managed alias/aws/sns: S3 cannot publish to a topic encrypted with it, and its policy cannot be changed."
  type        = string
  default     = null

  validation {
    condition     = var.sns_kms_master_key_id == null || !endswith(coalesce(var.sns_kms_master_key_id, "-"), "alias/aws/sns")
    error_message = "sns_kms_master_key_id: S3 cannot publish to a topic encrypted with the AWS-managed key alias/aws/sns. Leave it null (the module creates a key S3 may use) or name a customer-managed key."
  }
}

variable "lake_bucket_name" {
  description = "Bucket of the lake (changelog, target tables, ledger). Null: the landing bucket, where lake_prefix and changelog_prefix must then not nest with source_prefix (so source_prefix must be set). The module does not manage it: give it a lifecycle rule with abort_incomplete_multipart_upload (as examples/s3-to-sqs does), or the uncompleted multipart uploads of a killed loader (Spark writes through the S3A magic committer) are kept and billed."
  type        = string
  default     = null
}

variable "lake_prefix" {
  description = "Prefix under the lake bucket that the loader may read and write (target tables, ledgers, changelog by default)."
  type        = string
  default     = "lakeinlet/"

  validation {
    condition     = var.lake_prefix != "" && endswith(var.lake_prefix, "/")
    error_message = "lake_prefix must be a non-empty prefix ending with \"/\": the loader must not write the whole bucket."
  }
}

variable "changelog_prefix" {
  description = "Prefix of the changelog table in the lake bucket: the event source writes it, the loader reads it (and appends to it for backfills). Null: \"<lake_prefix>changelog/\"."
  type        = string
  default     = null

  validation {
    condition     = var.changelog_prefix == null || try(endswith(var.changelog_prefix, "/") && var.changelog_prefix != "/", false)
    error_message = "changelog_prefix must be a prefix ending with \"/\"."
  }
}

variable "glue_databases" {
  description = "Glue databases the loader registers its tables in (lakeinlet-load --catalog glue:<database>.<table>). Empty: no Glue permission. The loader may read, create and update tables and add partitions in these databases only, and create the databases themselves."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for db in var.glue_databases : can(regex("^[a-z0-9_]+$", db))])
    error_message = "glue_databases: lowercase letters, digits and underscores, as lakeinlet's --catalog names them."
  }
}

variable "after_load" {
  description = "The loader's --after-load: \"off\", \"delete\" or \"archive:s3://BUCKET/PREFIX\". Other than off, loader_policy_json gains the statements the cleanup needs: deleting (and, to archive, copying exact versions of) the source objects under source_prefix, and writing and reading the archive prefix."
  type        = string
  default     = "off"

  validation {
    condition     = contains(["off", "delete"], var.after_load) || can(regex("^archive:s3://[a-z0-9][a-z0-9.-]+[a-z0-9](/.*)?$", var.after_load))
    error_message = "after_load: expected off, delete or archive:s3://BUCKET/PREFIX, as lakeinlet-load --after-load takes it."
  }
}

variable "tags" {
  description = "Tags for every resource that takes tags."
  type        = map(string)
  default     = {}
}
