# Example root: a landing bucket wired to lakeinlet's queue, plus managed IAM policies for the
# roles that run the two jobs. tests/terraform applies this root against the moto server.

resource "aws_s3_bucket" "landing" {
  #checkov:skip=CKV2_AWS_62:Event notifications are configured by module.lakeinlet (aws_s3_bucket_notification), which checkov does not link to this bucket.
  #checkov:skip=CKV_AWS_18:Access logging needs a separate log bucket the account already owns; out of scope of this example.
  #checkov:skip=CKV_AWS_144:Cross-region replication is a disaster-recovery choice of the account, not of the ingestion pipeline.
  #checkov:skip=CKV_AWS_145:SSE-S3 by default; SSE-KMS needs a key policy that lets the loader's roles decrypt, which the account decides.
  bucket        = var.bucket_name
  force_destroy = var.force_destroy
}

resource "aws_s3_bucket_public_access_block" "landing" {
  bucket                  = aws_s3_bucket.landing.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "landing" {
  bucket = aws_s3_bucket.landing.id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_versioning" "landing" {
  bucket = aws_s3_bucket.landing.id

  versioning_configuration {
    status = "Enabled"
  }
}

# The landing bucket is also the lake bucket here: abort_incomplete_multipart_upload expires the
# uploads a killed loader leaves (Spark writes data files through the S3A magic committer, as
# multipart uploads completed only at job commit).
resource "aws_s3_bucket_lifecycle_configuration" "landing" {
  bucket = aws_s3_bucket.landing.id

  rule {
    id     = "abort-incomplete-uploads-and-expire-old-versions"
    status = "Enabled"

    filter {}

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }

    noncurrent_version_expiration {
      noncurrent_days = 30
    }
  }

  depends_on = [aws_s3_bucket_versioning.landing]
}

module "lakeinlet" {
  source = "../.."

  name                 = var.name
  bucket_name          = aws_s3_bucket.landing.id
  source_prefix        = var.source_prefix
  lake_prefix          = var.lake_prefix
  sns_fanout           = var.sns_fanout
  restrict_dlq_sources = var.restrict_dlq_sources
  glue_databases       = var.glue_databases
}

resource "aws_iam_policy" "event_source" {
  name        = "${var.name}-event-source"
  description = "lakeinlet-poll: consume ${var.name} and write the changelog."
  policy      = module.lakeinlet.event_source_policy_json
}

resource "aws_iam_policy" "loader" {
  name        = "${var.name}-loader"
  description = "lakeinlet-load: read notified objects, write the lake under ${var.lake_prefix}."
  policy      = module.lakeinlet.loader_policy_json
}
