# Resource policies of the two queues and identity policies of the two jobs.
#
# Condition keys (s3:prefix, s3:if-match, aws:PrincipalIsAWSService) are evaluated by AWS only:
# moto, which the apply tests sign real calls against, judges actions and resources alone, so the
# plan tests (tests/terraform/test_plan.py) check each condition's shape.

data "aws_iam_policy_document" "queue" {
  source_policy_documents = [data.aws_iam_policy_document.tls_only["queue"].json]

  statement {
    sid       = "AllowSourceToSend"
    effect    = "Allow"
    actions   = ["sqs:SendMessage"]
    resources = [local.queue_arn]

    principals {
      type        = "Service"
      identifiers = [local.sender_service]
    }

    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [local.sender_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }

  # No IAM principal sends here, of this account or another: S3 or SNS deliver (allowed above by
  # aws:SourceArn), and no lakeinlet job sends to this queue (`--poison dlq` sends to the DLQ).
  # queue_sender_arns names the exceptions, e.g. a role that moves dead letters back.
  statement {
    sid       = "DenySendersOtherThanTheSource"
    effect    = "Deny"
    actions   = ["sqs:SendMessage"]
    resources = [local.queue_arn]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "BoolIfExists"
      variable = "aws:PrincipalIsAWSService"
      values   = ["false"]
    }

    dynamic "condition" {
      for_each = length(var.queue_sender_arns) > 0 ? [1] : []
      content {
        test     = "ArnNotLikeIfExists"
        variable = "aws:PrincipalArn"
        values   = var.queue_sender_arns
      }
    }
  }
}

# Every queue and the topic refuse plain HTTP: one statement, per resource. The DLQ receives from the
# event queue's redrive (SQS itself) and the poller's `--poison dlq` sends; this is its whole policy.
locals {
  tls_only = merge(
    { queue = { arn = local.queue_arn, action = "sqs:*" }, dlq = { arn = local.dlq_arn, action = "sqs:*" } },
    var.sns_fanout ? { topic = { arn = local.topic_arn, action = "sns:Publish" } } : {},
  )
}

data "aws_iam_policy_document" "tls_only" {
  for_each = local.tls_only

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = [each.value.action]
    resources = [each.value.arn]

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

data "aws_iam_policy_document" "event_source" {
  statement {
    sid = "ConsumeEventQueue"
    actions = [
      "sqs:ReceiveMessage",
      "sqs:DeleteMessage",
      "sqs:ChangeMessageVisibility",
      "sqs:GetQueueAttributes",
    ]
    resources = [local.queue_arn]
  }

  # --poison dlq: a message that is not an event is sent to the DLQ at once, then deleted.
  statement {
    sid       = "MovePoisonToDLQ"
    actions   = ["sqs:SendMessage", "sqs:GetQueueUrl"]
    resources = [local.dlq_arn]
  }

  statement {
    sid       = "ReadWriteChangelog"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
    resources = ["${local.lake_bucket_arn}/${local.changelog_prefix}*"]
  }

  # delta-rs lists the changelog's log and, to vacuum, the table; S3 also asks for a listing
  # right under the key's name before it answers 404 (not 403) for a missing key.
  statement {
    sid       = "ListChangelog"
    actions   = ["s3:ListBucket"]
    resources = [local.lake_bucket_arn]

    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${local.changelog_prefix}*"]
    }
  }
}

# lakeinlet-load: read notified objects, list the source prefix for backfills, read and write
# its tables and ledgers, append to the changelog (backfills). Nothing else.
# Spark writes data files through the S3A magic committer (lakeinlet/committers.py): multipart
# uploads completed at job commit; at job commit or abort it lists the uploads under the
# destination and aborts those left by failed tasks.
data "aws_iam_policy_document" "loader" {
  statement {
    sid       = "ReadSourceObjects"
    actions   = ["s3:GetObject"]
    resources = ["${local.bucket_arn}/${var.source_prefix}*"]
  }

  # Backfills list the source prefix; an empty source_prefix (the lake in another bucket) is the
  # whole landing bucket, where a listing may carry no prefix at all.
  statement {
    sid       = "ListSourcePrefix"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]

    dynamic "condition" {
      for_each = var.source_prefix != "" ? [1] : []
      content {
        test     = "StringLike"
        variable = "s3:prefix"
        values   = ["${var.source_prefix}*"]
      }
    }
  }

  statement {
    sid       = "ListLake"
    actions   = ["s3:ListBucket"]
    resources = [local.lake_bucket_arn]

    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = distinct(["${var.lake_prefix}*", "${local.changelog_prefix}*"])
    }
  }

  statement {
    sid = "ReadWriteLake"
    actions = [
      "s3:GetObject",
      "s3:PutObject",
      "s3:DeleteObject",
      "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts",
    ]
    resources = ["${local.lake_bucket_arn}/${var.lake_prefix}*"]
  }

  # A backfill appends with delta-rs: new data files, then the next log version put if absent
  # (aws_conditional_put): no rename, no delete. delta-rs's default post-commit hook would also
  # delete log files past delta.logRetentionDuration; the append must turn that hook off
  # (cleanup_expired_logs=False, as maintain does), or it meets the deny below.
  statement {
    sid       = "AppendToChangelog"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"]
    resources = ["${local.lake_bucket_arn}/${local.changelog_prefix}*"]
  }

  # The changelog usually lies inside lake_prefix, whose grant above includes deletes: only the
  # event source (`lakeinlet-poll maintain`) vacuums it. A deny wins over any grant, so a role
  # holding both jobs' documents cannot vacuum the changelog either: give the jobs a role each.
  statement {
    sid       = "NeverDeleteInTheChangelog"
    effect    = "Deny"
    actions   = ["s3:DeleteObject", "s3:DeleteObjectVersion"]
    resources = ["${local.lake_bucket_arn}/${local.changelog_prefix}*"]
  }

  # A bucket-level action, so on the bucket ARN: the committer asks only for uploads under the
  # table it writes; the answer holds keys and upload ids, no object data.
  statement {
    sid       = "ListLakeMultipartUploads"
    actions   = ["s3:ListBucketMultipartUploads"]
    resources = [local.lake_bucket_arn]
  }

  # --catalog glue:DB.TABLE (lakeinlet/incremental/registry/glue.py): GetTable on every run,
  # CreateTable/UpdateTable when the table or its schema is new, BatchCreatePartition for Hudi's
  # partitions, Get/CreateDatabase for a database that does not exist yet. Glue authorises a
  # table call on the catalog, the database and the table ARN together (its documented minimum for
  # CreateTable names all three), so the table actions keep the database ARN; the database
  # actions never reach a table.
  dynamic "statement" {
    for_each = length(var.glue_databases) > 0 ? [1] : []
    content {
      sid       = "ReadOrCreateGlueDatabases"
      actions   = ["glue:GetDatabase", "glue:CreateDatabase"]
      resources = concat([local.glue_catalog_arn], local.glue_database_arns)
    }
  }

  dynamic "statement" {
    for_each = length(var.glue_databases) > 0 ? [1] : []
    content {
      sid       = "RegisterTablesInGlue"
      actions   = ["glue:GetTable", "glue:CreateTable", "glue:UpdateTable", "glue:BatchCreatePartition"]
      resources = concat([local.glue_catalog_arn], local.glue_database_arns, local.glue_table_arns)
    }
  }

  # --after-load (lakeinlet/incremental/cleanup.py): a conditional delete (If-Match, which also
  # needs the s3:GetObject granted above) of each source object version loaded; to archive, a copy
  # of that exact version first. A delete without If-Match is refused (S3's documented form, Null
  # s3:if-match false): it would remove an object overwritten since it was loaded. The
  # preconditions on the event queue keep source_prefix off the lake.
  dynamic "statement" {
    for_each = var.after_load != "off" ? [1] : []
    content {
      sid       = "CleanUpLoadedSources"
      actions   = ["s3:DeleteObject"]
      resources = ["${local.bucket_arn}/${var.source_prefix}*"]

      condition {
        test     = "Null"
        variable = "s3:if-match"
        values   = ["false"]
      }
    }
  }

  # On a versioned bucket the loaded version is deleted by its version id: that names the exact
  # bytes loaded, so an overwrite (a newer version) is never touched; S3 applies If-Match to the
  # current version only, so this action carries no if-match condition.
  dynamic "statement" {
    for_each = var.after_load != "off" ? [1] : []
    content {
      sid       = "CleanUpLoadedVersions"
      actions   = ["s3:DeleteObjectVersion"]
      resources = ["${local.bucket_arn}/${var.source_prefix}*"]
    }
  }

  dynamic "statement" {
    for_each = local.archiving ? [1] : []
    content {
      sid       = "ReadLoadedVersions"
      actions   = ["s3:GetObjectVersion"]
      resources = ["${local.bucket_arn}/${var.source_prefix}*"]
    }
  }

  # Each copy is HEADed before it is made (a pass resumed after a crash does not copy twice): a
  # HEAD of a missing key answers 403 instead of 404 without s3:ListBucket on the bucket. Copies
  # over 5 GiB go in parts, which a failed copy aborts.
  dynamic "statement" {
    for_each = local.archiving ? [1] : []
    content {
      sid       = "WriteSourceArchive"
      actions   = ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload"]
      resources = ["arn:${local.partition}:s3:::${local.archive_bucket}/${local.archive_prefix}*"]
    }
  }

  dynamic "statement" {
    for_each = local.archiving ? [1] : []
    content {
      sid       = "ListSourceArchive"
      actions   = ["s3:ListBucket"]
      resources = ["arn:${local.partition}:s3:::${local.archive_bucket}"]

      dynamic "condition" {
        for_each = local.archive_prefix != "" ? [1] : []
        content {
          test     = "StringLike"
          variable = "s3:prefix"
          values   = ["${local.archive_prefix}*"]
        }
      }
    }
  }
}

locals {
  glue_arn           = "arn:${local.partition}:glue:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}"
  glue_catalog_arn   = "${local.glue_arn}:catalog"
  glue_database_arns = [for db in var.glue_databases : "${local.glue_arn}:database/${db}"]
  glue_table_arns    = [for db in var.glue_databases : "${local.glue_arn}:table/${db}/*"]
}

# --after-load archive:s3://BUCKET/PREFIX → the archive's bucket and key prefix (PREFIX/ or "").
locals {
  archiving      = startswith(var.after_load, "archive:")
  archive_path   = trimprefix(var.after_load, "archive:s3://")
  archive_bucket = split("/", local.archive_path)[0]
  archive_key    = trim(join("/", slice(split("/", local.archive_path), 1, length(split("/", local.archive_path)))), "/")
  archive_prefix = local.archive_key == "" ? "" : "${local.archive_key}/"
}
