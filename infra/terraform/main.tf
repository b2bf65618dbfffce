# lakeinlet's AWS side: S3 bucket notification -> (optional SNS topic) -> SQS queue -> DLQ.
# The same shape `lakeinlet local up` provisions on the emulator (lakeinlet.dev.emulator.provision).

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

data "aws_region" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  account_id = coalesce(var.account_id, data.aws_caller_identity.current.account_id)
  # Known before the queues and the topic exist, so their policies are set in the calls that
  # create them (no window without a policy) and every policy document is known at plan.
  queue_arn        = "arn:${local.partition}:sqs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:${var.name}"
  dlq_arn          = "${local.queue_arn}-dlq"
  bucket_arn       = "arn:${local.partition}:s3:::${var.bucket_name}"
  lake_bucket      = coalesce(var.lake_bucket_name, var.bucket_name)
  lake_bucket_arn  = "arn:${local.partition}:s3:::${local.lake_bucket}"
  changelog_prefix = coalesce(var.changelog_prefix, "${var.lake_prefix}changelog/")
  changelog_uri    = "s3://${local.lake_bucket}/${trimsuffix(local.changelog_prefix, "/")}"
  lake_uri         = "s3://${local.lake_bucket}/${trimsuffix(var.lake_prefix, "/")}"
  topic_arn        = var.sns_fanout ? "arn:${local.partition}:sns:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:${var.name}-topic" : null
  # Who may send to the queue: the bucket itself, or the topic that fans the bucket's events out.
  sender_service = var.sns_fanout ? "sns.amazonaws.com" : "s3.amazonaws.com"
  sender_arn     = var.sns_fanout ? local.topic_arn : local.bucket_arn
}

# lakeinlet's own locations must never be notified or cleaned up as sources: with the lake under
# the notified prefix the poller feeds on its own changelog commits, and the loader loads (and
# with after_load deletes) its own tables. Two prefixes nest when one starts with the other.
locals {
  lake_in_landing = local.lake_bucket == var.bucket_name
  lake_location   = "s3://${local.lake_bucket}/${var.lake_prefix}"
  prefix_pairs = {
    source_lake      = [var.source_prefix, var.lake_prefix]
    source_changelog = [var.source_prefix, local.changelog_prefix]
    archive_source   = [local.archive_prefix, var.source_prefix]
  }
  nest = { for pair, p in local.prefix_pairs : pair => startswith(p[0], p[1]) || startswith(p[1], p[0]) }
  # An empty source_prefix with the lake in the landing bucket has a message of its own.
  source_nests_lake      = local.lake_in_landing && var.source_prefix != "" && local.nest.source_lake
  source_nests_changelog = local.lake_in_landing && var.source_prefix != "" && local.nest.source_changelog && !local.nest.source_lake
  archive_nests_source   = local.archiving && local.archive_bucket == var.bucket_name && local.nest.archive_source
  # Inside the lake prefix an archive is one more of lakeinlet's own locations; above it, not.
  archive_over_lake = local.archiving && local.archive_bucket == local.lake_bucket && anytrue(
    [for own in [var.lake_prefix, local.changelog_prefix] : startswith(own, local.archive_prefix)]
  )
  nest_advice = "Set them to prefixes neither of which starts with the other (e.g. source_prefix = \"incoming/\", lake_prefix = \"lakeinlet/\"), or lake_bucket_name to another bucket."
}

resource "aws_sqs_queue" "dlq" {
  name                      = "${var.name}-dlq"
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = var.sqs_managed_sse
  policy                    = data.aws_iam_policy_document.tls_only["dlq"].json
  tags                      = var.tags

  lifecycle {
    postcondition {
      condition     = self.arn == local.dlq_arn
      error_message = "The DLQ policy names ${local.dlq_arn}, but the DLQ is ${self.arn}."
    }
  }
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

  # The guards on lakeinlet's own locations sit on the resource every configuration creates, so a
  # refused configuration plans nothing.
  lifecycle {
    precondition {
      condition     = !(local.lake_in_landing && var.source_prefix == "")
      error_message = "source_prefix is empty and the lake (${local.lake_location}) is in the landing bucket: the notification would cover the lake, and lakeinlet would ingest its own changelog and tables (and with after_load, delete them). Set source_prefix to the prefix your producers write under (e.g. \"incoming/\"), or lake_bucket_name to another bucket."
    }
    precondition {
      condition     = !local.source_nests_lake
      error_message = "source_prefix \"${var.source_prefix}\" and lake_prefix \"${var.lake_prefix}\" nest in s3://${var.bucket_name}: the notification would cover lakeinlet's own tables. ${local.nest_advice}"
    }
    precondition {
      condition     = !local.source_nests_changelog
      error_message = "source_prefix \"${var.source_prefix}\" and changelog_prefix \"${local.changelog_prefix}\" nest in s3://${var.bucket_name}: the poller would be notified of its own changelog commits. ${local.nest_advice}"
    }
    precondition {
      condition     = !local.archive_nests_source
      error_message = "after_load archives into s3://${local.archive_bucket}/${local.archive_prefix}, which holds the sources (source_prefix \"${var.source_prefix}\") or lies under them: archived copies would be notified and loaded again. Set after_load to an archive prefix that neither holds nor lies under source_prefix."
    }
    precondition {
      condition     = !local.archive_over_lake
      error_message = "after_load archives into s3://${local.archive_bucket}/${local.archive_prefix}, above the lake (${local.lake_location}): the cleanup grants would cover lakeinlet's own tables. Set after_load to an archive prefix beside or inside lake_prefix."
    }
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
