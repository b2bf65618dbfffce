# lakeinlet's AWS side: S3 bucket notification -> (optional SNS topic) -> SQS queue -> DLQ.
# The same shape `lakeinlet local up` provisions on the emulator (lakeinlet.dev.emulator.provision).

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

data "aws_region" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  account_id = coalesce(var.account_id, data.aws_caller_identity.current.account_id)
  # Known before the queue exists, so its policy is set in the CreateQueue call itself: no
  # window without a policy, and no separate policy resource to wait for.
  queue_arn        = "arn:${local.partition}:sqs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:${var.name}"
  bucket_arn       = "arn:${local.partition}:s3:::${var.bucket_name}"
  lake_bucket      = coalesce(var.lake_bucket_name, var.bucket_name)
  lake_bucket_arn  = "arn:${local.partition}:s3:::${local.lake_bucket}"
  changelog_prefix = coalesce(var.changelog_prefix, "${var.lake_prefix}changelog/")
  topic_arn        = one(aws_sns_topic.events[*].arn)
  # Who may send to the queue: the bucket itself, or the topic that fans the bucket's events out.
  sender_service = var.sns_fanout ? "sns.amazonaws.com" : "s3.amazonaws.com"
  sender_arn     = var.sns_fanout ? local.topic_arn : local.bucket_arn
}

resource "aws_sqs_queue" "dlq" {
  name                      = "${var.name}-dlq"
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = var.sqs_managed_sse
  tags                      = var.tags
}

resource "aws_sqs_queue" "events" {
  name                       = var.name
  visibility_timeout_seconds = var.visibility_timeout_seconds
  receive_wait_time_seconds  = var.receive_wait_time_seconds
  message_retention_seconds  = var.message_retention_seconds
  sqs_managed_sse_enabled    = var.sqs_managed_sse
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq.arn
    maxReceiveCount     = var.max_receive_count
  })
  policy = data.aws_iam_policy_document.queue.json
  tags   = var.tags

  lifecycle {
    postcondition {
      condition     = self.arn == local.queue_arn
      error_message = "The queue policy names ${local.queue_arn}, but the queue is ${self.arn}."
    }
    precondition {
      condition     = var.dlq_message_retention_seconds >= var.message_retention_seconds
      error_message = "dlq_message_retention_seconds must not be shorter than message_retention_seconds: a message's age counts from its first enqueue, so a shorter DLQ retention drops dead letters on arrival."
    }
  }
}

# A separate resource (not the DLQ's redrive_allow_policy argument): the DLQ must exist before
# the event queue that names it, and this policy names the event queue. The provider waits
# until GetQueueAttributes returns the value it set; moto never stores RedriveAllowPolicy, so
# emulator runs set restrict_dlq_sources = false.
resource "aws_sqs_queue_redrive_allow_policy" "dlq" {
  count     = var.restrict_dlq_sources ? 1 : 0
  queue_url = aws_sqs_queue.dlq.id
  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.events.arn]
  })
}

resource "aws_s3_bucket_notification" "events" {
  count  = var.manage_bucket_notification ? 1 : 0
  bucket = var.bucket_name

  dynamic "queue" {
    for_each = var.sns_fanout ? [] : [aws_sqs_queue.events.arn]
    content {
      id            = var.name
      queue_arn     = queue.value
      events        = var.event_types
      filter_prefix = var.source_prefix != "" ? var.source_prefix : null
      filter_suffix = var.source_suffix != "" ? var.source_suffix : null
    }
  }

  dynamic "topic" {
    for_each = var.sns_fanout ? [local.topic_arn] : []
    content {
      id            = var.name
      topic_arn     = topic.value
      events        = var.event_types
      filter_prefix = var.source_prefix != "" ? var.source_prefix : null
      filter_suffix = var.source_suffix != "" ? var.source_suffix : null
    }
  }

  # S3 checks that it may deliver when the notification is saved: policies first.
  depends_on = [aws_sqs_queue.events, aws_sns_topic_policy.events, aws_sns_topic_subscription.queue]
}
