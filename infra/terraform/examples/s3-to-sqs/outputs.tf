output "bucket" {
  description = "The landing bucket."
  value       = aws_s3_bucket.landing.id
}

output "queue_url" {
  description = "lakeinlet-poll --queue-url."
  value       = module.lakeinlet.queue_url
}

output "queue_arn" {
  description = "ARN of the event queue."
  value       = module.lakeinlet.queue_arn
}

output "dlq_url" {
  description = "URL of the dead-letter queue."
  value       = module.lakeinlet.dlq_url
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue."
  value       = module.lakeinlet.dlq_arn
}

output "topic_arn" {
  description = "SNS topic ARN when sns_fanout is on."
  value       = module.lakeinlet.topic_arn
}

output "queue_policy_json" {
  description = "Resource policy of the event queue."
  value       = module.lakeinlet.queue_policy_json
}

output "changelog_uri" {
  description = "lakeinlet-poll --changelog and lakeinlet-load --changelog."
  value       = module.lakeinlet.changelog_uri
}

output "lake_uri" {
  description = "Root of the target tables (lakeinlet-load --table <lake_uri>/<name>)."
  value       = module.lakeinlet.lake_uri
}

output "poll_environment" {
  description = "Environment for lakeinlet-poll."
  value       = module.lakeinlet.poll_environment
}

output "load_environment" {
  description = "Environment for lakeinlet-load."
  value       = module.lakeinlet.load_environment
}

output "queue_settings" {
  description = "Applied queue settings keyed like lakeinlet.queue_settings.QueueSettings."
  value       = module.lakeinlet.queue_settings
}

output "event_source_policy_arn" {
  description = "Attach to the role that runs lakeinlet-poll."
  value       = aws_iam_policy.event_source.arn
}

output "loader_policy_arn" {
  description = "Attach to the role of the Spark driver and executors that run lakeinlet-load."
  value       = aws_iam_policy.loader.arn
}

output "event_source_policy_json" {
  description = "The event source's policy document."
  value       = module.lakeinlet.event_source_policy_json
}

output "loader_policy_json" {
  description = "The loader's policy document."
  value       = module.lakeinlet.loader_policy_json
}
