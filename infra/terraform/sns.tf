# Optional fan-out: S3 -> SNS topic -> the event queue (and any other subscriber).

resource "aws_sns_topic" "events" {
  #checkov:skip=CKV_AWS_26:Encryption needs a customer-managed key S3 may use (var.sns_kms_master_key_id); S3 cannot publish to a topic under the AWS-managed alias/aws/sns, so it cannot be defaulted.
  count             = var.sns_fanout ? 1 : 0
  name              = "${var.name}-topic"
  kms_master_key_id = var.sns_kms_master_key_id
  tags              = var.tags
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
  count = var.sns_fanout ? 1 : 0

  statement {
    sid       = "AllowBucketToPublish"
    effect    = "Allow"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.events[0].arn]

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

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.events[0].arn]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}
