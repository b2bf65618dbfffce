# Optional fan-out: S3 -> SNS topic -> the event queue (and any other subscriber).

resource "aws_sns_topic" "events" {
  count             = var.sns_fanout ? 1 : 0
  name              = "${var.name}-topic"
  kms_master_key_id = coalesce(var.sns_kms_master_key_id, one(aws_kms_key.sns[*].arn))
  tags              = var.tags

  lifecycle {
    postcondition {
      condition     = self.arn == local.topic_arn
      error_message = "The topic and queue policies name ${local.topic_arn}, but the topic is ${self.arn}."
    }
  }
}

# The topic's key when sns_kms_master_key_id names none. S3 cannot publish to a topic under the
# AWS-managed alias/aws/sns (its policy cannot be changed to let S3 in), so the key is the
# module's own: S3 may use it for this topic only.
resource "aws_kms_key" "sns" {
  count               = var.sns_fanout && var.sns_kms_master_key_id == null ? 1 : 0
  description         = "Encrypts the SNS topic ${var.name}-topic (lakeinlet): S3 event notifications of ${var.bucket_name}."
  enable_key_rotation = true
  policy              = data.aws_iam_policy_document.sns_key[0].json
  tags                = var.tags
}

data "aws_iam_policy_document" "sns_key" {
  count = var.sns_fanout && var.sns_kms_master_key_id == null ? 1 : 0

  # The default key policy: the account's IAM policies decide who administers and uses the key.
  statement {
    sid       = "AccountAdministersTheKey"
    actions   = ["kms:*"]
    resources = ["*"]

    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  # SNS encrypts each message under a data key bound to the topic (encryption context
  # aws:sns:topicArn); S3, the publisher, must be allowed to have it made and read.
  statement {
    sid       = "AllowBucketNotificationsToEncrypt"
    actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
    resources = ["*"]

    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "kms:EncryptionContext:aws:sns:topicArn"
      values   = [local.topic_arn]
    }
  }
}

resource "aws_sns_topic_policy" "events" {
  count  = var.sns_fanout ? 1 : 0
  arn    = aws_sns_topic.events[0].arn
  policy = data.aws_iam_policy_document.topic[0].json
}

resource "aws_sns_topic_subscription" "queue" {
  count                = var.sns_fanout ? 1 : 0
  topic_arn            = aws_sns_topic.events[0].arn
  protocol             = "sqs"
  endpoint             = aws_sqs_queue.events.arn
  raw_message_delivery = var.sns_raw_message_delivery
}

data "aws_iam_policy_document" "topic" {
  count                   = var.sns_fanout ? 1 : 0
  source_policy_documents = [data.aws_iam_policy_document.tls_only["topic"].json]

  statement {
    sid       = "AllowBucketToPublish"
    effect    = "Allow"
    actions   = ["sns:Publish"]
    resources = [local.topic_arn]

    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }

    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [local.bucket_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}
