output "queue_url" {
  description = "URL of the event queue: lakeinlet-poll --queue-url (env LAKEINLET__QUEUE__QUEUE_URL)."
  value       = aws_sqs_queue.events.id
}

output "queue_arn" {
  description = "ARN of the event queue (for notification configurations managed elsewhere)."
  value       = aws_sqs_queue.events.arn
}

output "dlq_url" {
  description = "URL of the dead-letter queue: inspect or redrive poison messages from here."
  value       = aws_sqs_queue.dlq.id
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue (alarm on its ApproximateNumberOfMessagesVisible)."
  value       = aws_sqs_queue.dlq.arn
}

output "topic_arn" {
  description = "ARN of the SNS topic when sns_fanout is on, else null."
  value       = local.topic_arn
}

output "queue_policy_json" {
  description = "Resource policy of the event queue."
  value       = data.aws_iam_policy_document.queue.json
}

output "topic_policy_json" {
  description = "Resource policy of the SNS topic when sns_fanout is on, else null."
  value       = one(data.aws_iam_policy_document.topic[*].json)
}

output "event_source_policy_json" {
  description = "Identity policy for the role that runs lakeinlet-poll (queue consumer + changelog writer)."
  value       = data.aws_iam_policy_document.event_source.json
}

output "loader_policy_json" {
  description = "Identity policy for the role that runs lakeinlet-load (Spark driver and executors)."
  value       = data.aws_iam_policy_document.loader.json
}

output "changelog_uri" {
  description = "Changelog table location: lakeinlet-poll --changelog and lakeinlet-load --changelog."
  value       = local.changelog_uri
}

output "lake_uri" {
  description = "Root under which the loader may create target tables (lakeinlet-load --table <lake_uri>/<name>)."
  value       = local.lake_uri
}

output "poll_environment" {
  description = "Environment of lakeinlet-poll derived from this module (LAKEINLET__SECTION__KEY): its queue, changelog, bucket allow-list, and the lake, whose events it acknowledges without a row."
  value = {
    LAKEINLET__QUEUE__QUEUE_URL = aws_sqs_queue.events.id
    LAKEINLET__CHANGELOG__URI   = local.changelog_uri
    LAKEINLET__FILTER__BUCKETS  = var.bucket_name
    LAKEINLET__FILTER__LAKE     = local.lake_uri
  }
}

output "load_environment" {
  description = "Environment of lakeinlet-load derived from this module: the changelog, the source prefix it may read, its bucket allow-list, and the lake (lakeinlet's own locations, never loaded)."
  value = {
    LAKEINLET__TABLES__CHANGELOG = local.changelog_uri
    LAKEINLET__PLAN__PREFIX      = var.source_prefix
    LAKEINLET__PLAN__BUCKETS     = var.bucket_name
    LAKEINLET__PLAN__LAKE        = local.lake_uri
  }
}

output "queue_settings" {
  description = "The applied queue settings, keyed like lakeinlet.queue_settings.QueueSettings."
  value = {
    visibility_timeout_seconds    = aws_sqs_queue.events.visibility_timeout_seconds
    receive_wait_time_seconds     = aws_sqs_queue.events.receive_wait_time_seconds
    message_retention_seconds     = aws_sqs_queue.events.message_retention_seconds
    max_receive_count             = var.max_receive_count
    dlq_message_retention_seconds = aws_sqs_queue.dlq.message_retention_seconds
    sqs_managed_sse               = aws_sqs_queue.events.sqs_managed_sse_enabled
  }
}
