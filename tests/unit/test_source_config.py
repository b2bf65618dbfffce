"""The event source's configuration: flags, environment, validation, --help, exit codes."""

from __future__ import annotations

import pytest

from lakeinlet.config import resolve
from lakeinlet.errors import ConfigError
from lakeinlet.sources.job import build_parser, main, poller_settings
from lakeinlet.sources.settings import SourceConfig

pytestmark = pytest.mark.unit

QUEUE = "http://127.0.0.1:5000/123456789012/lakeinlet-events"
BUCKET = ["--bucket", "landing"]


def config(argv: list[str], environ: dict[str, str] | None = None) -> SourceConfig:
    args = build_parser(SourceConfig, None, "").parse_args(argv)
    return resolve(SourceConfig, args, environ or {})


def test_minimum_flags_resolve() -> None:
    cfg = config(["--queue-url", QUEUE, "--changelog", "/tmp/cl", "--endpoint-url", "http://127.0.0.1:1",
                  "--until-empty", "--wait-seconds", "3", "--visibility-timeout", "60",
                  "--batch-size", "50", "--receivers", "2", "--bucket", "a,b", "--bucket", "c"])
    s = poller_settings(cfg)
    assert (s.wait_seconds, s.visibility_timeout, s.batch_size) == (3, 60, 50)
    assert (s.receivers, s.until_empty) == (2, True)
    assert s.event_filter.buckets == frozenset({"a", "b", "c"})
    assert s.source_id == "lakeinlet-events"
    assert cfg.aws.endpoint_url == "http://127.0.0.1:1" and cfg.changelog.uri == "/tmp/cl"


def test_aws_endpoint_url_and_lakeinlet_env_are_honoured() -> None:
    cfg = config(["--queue-url", QUEUE], {"AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                                          "LAKEINLET__CHANGELOG__URI": "s3://lake/cl",
                                          "LAKEINLET__FILTER__BUCKETS": "landing",
                                          "LAKEINLET__BATCH__BATCH_SIZE": "7"})
    assert cfg.aws.endpoint_url == "http://127.0.0.1:9"
    assert (cfg.changelog.uri, cfg.batch.batch_size) == ("s3://lake/cl", 7)


def test_every_problem_is_reported_together() -> None:
    with pytest.raises(ConfigError) as err:
        config(["--queue-url", "sqs-queue", "--wait-seconds", "25", "--receivers", "0",
                "--batch-size", "x"])
    text = str(err.value)
    for flag in ("--queue-url", "--wait-seconds", "--receivers", "--batch-size", "--changelog"):
        assert flag in text


def test_batch_seconds_must_stay_below_the_visibility_timeout() -> None:
    with pytest.raises(ConfigError, match="--batch-seconds"):
        config(["--queue-url", QUEUE, "--changelog", "x", "--batch-seconds", "30",
                "--visibility-timeout", "30"])


def test_drain_wait_reaches_the_poller_and_is_validated() -> None:
    s = poller_settings(config(["--queue-url", QUEUE, "--changelog", "x", "--until-empty",
                                "--drain-wait-seconds", "3", *BUCKET]))
    assert (s.drain_wait_seconds, s.receive_wait) == (3, 3), s
    with pytest.raises(ConfigError, match="--drain-wait-seconds: expected 0-20, found 21"):
        config(["--queue-url", QUEUE, "--changelog", "x", "--drain-wait-seconds", "21"])


def test_help_is_generated_from_the_field_docs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for words in ("--until-empty", "Drain and stop", "--visibility-timeout", "--bucket",
                  "Bucket allow-list", "LAKEINLET__QUEUE__QUEUE_URL", "AWS_ENDPOINT_URL", "--any-bucket",
                  "--lake URI", "LAKEINLET__FILTER__LAKE", "lakeinlet's lake roots (tables, ledgers"):
        assert words in out


def test_status_help_exists(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["status", "--help"])
    assert "--queue-url" in capsys.readouterr().out


def test_configuration_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--queue-url", "nope"]) == 2
    assert "--changelog" in capsys.readouterr().err
    assert main(["status"]) == 2


def test_poison_settings_reach_the_poller_and_are_checked() -> None:
    s = poller_settings(config(["--queue-url", QUEUE, "--changelog", "x", "--poison", "dlq",
                                "--poison-log-per-minute", "3", *BUCKET]))
    assert (s.poison, s.poison_log_per_minute) == ("dlq", 3), s
    assert poller_settings(config(["--queue-url", QUEUE, "--changelog", "x", *BUCKET])).poison == "redrive"
    with pytest.raises(ConfigError) as err:
        config(["--queue-url", QUEUE, "--changelog", "x", "--poison", "park",
                "--dlq-url", "dlq", "--poison-log-per-minute", "0"])
    text = str(err.value)
    for words in ("--poison (flag): expected one of dlq, redrive, found 'park'", "--dlq-url: expected",
                  "--poison-log-per-minute: expected at least 1"):
        assert words in text, f"expected {words!r} in {text}"
    with pytest.raises(ConfigError, match="--dlq-url: only used with --poison dlq"):
        config(["--queue-url", QUEUE, "--changelog", "x", "--dlq-url", QUEUE + "-dlq"])


def test_event_types_default_to_creations_removals_and_lifecycle_expirations() -> None:
    s = poller_settings(config(["--queue-url", QUEUE, "--changelog", "x", *BUCKET]))
    assert s.event_filter.event_prefixes == ("ObjectCreated:", "ObjectRemoved:", "LifecycleExpiration:")


def test_an_event_type_written_as_a_notification_configuration_name_is_refused() -> None:
    """`s3:LifecycleExpiration:*` matches no record's eventName: every event would be dropped."""
    expected = r"--event-type s3:LifecycleExpiration:\*.*e\.g\. LifecycleExpiration:"
    with pytest.raises(ConfigError, match=expected):
        config(["--queue-url", QUEUE, "--changelog", "x", "--event-type", "s3:LifecycleExpiration:*"])


def test_the_poller_refuses_to_start_without_a_bucket_allow_list(capsys: pytest.CaptureFixture[str]) -> None:
    """Any bucket a changelog row names is read (and with --after-load deleted) by the loader:
    accepting every bucket must be said, not defaulted to."""
    assert main(["--queue-url", QUEUE, "--changelog", "x"]) == 2
    err = capsys.readouterr().err
    assert ("  - --bucket: expected one or more buckets whose events are written (or --any-bucket to "
            "write every bucket's), found neither") in err.splitlines(), err
    with pytest.raises(ConfigError, match="--any-bucket: expected without --bucket, found --bucket a,b"):
        config(["--queue-url", QUEUE, "--changelog", "x", "--bucket", "a,b", "--any-bucket"])


@pytest.mark.parametrize(("argv", "environ"), [
    (["--any-bucket"], {}), ([], {"LAKEINLET__FILTER__ANY_BUCKET": "true"}),
])
def test_any_bucket_says_so_by_flag_or_environment(argv: list[str], environ: dict[str, str]) -> None:
    s = poller_settings(config(["--queue-url", QUEUE, "--changelog", "x", *argv], environ))
    assert s.event_filter.buckets == frozenset() and s.event_filter.bucket_allowed, s.event_filter


def test_the_changelog_and_every_lake_root_are_own_locations() -> None:
    flags = ["--queue-url", QUEUE, "--changelog", "s3a://lake/changelog", *BUCKET, "--lake", "s3://lake/tables"]
    s = poller_settings(config(flags, {"LAKEINLET__FILTER__LAKE": "s3://ignored/by-the-flag"}))
    assert [str(loc) for loc in s.event_filter.own.locations] == ["s3://lake/changelog/", "s3://lake/tables/"]
    by_env = config(["--queue-url", QUEUE, "--changelog", "./cl", *BUCKET],
                    {"LAKEINLET__FILTER__LAKE": "s3://lake/a,s3://other"})
    assert [str(loc) for loc in poller_settings(by_env).event_filter.own.locations] == [
        "s3://lake/a/", "s3://other/"], "expected a local changelog left out and both lake roots in"
    assert poller_settings(config(["--queue-url", QUEUE, "--changelog", "s3://lake/cl", *BUCKET])
                           ).event_filter.own.owner("lake", "cl/_delta_log/0.json") is not None


def test_a_lake_root_that_is_not_on_s3_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"--lake ./lake: expected s3://bucket\[/prefix\]"):
        config(["--queue-url", QUEUE, "--changelog", "x", *BUCKET, "--lake", "./lake"])
