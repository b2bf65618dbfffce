"""The proxy's error answers parse, with botocore's own parsers, to AWS's real error codes."""

from __future__ import annotations

import pytest
from botocore.awsrequest import HeadersDict
from botocore.parsers import create_parser
from botocore.retries.standard import RetryContext, ThrottledRetryableChecker

from chaos.error_bodies import error_response

pytestmark = pytest.mark.unit


def parsed_code(kind: str, service: str, protocol: str, method: str = "POST") -> tuple[int, str]:
    status, headers, body = error_response(kind, service, method, json_protocol=protocol == "json")
    error = create_parser(protocol).parse(  # botocore's parsers expect its HeadersDict
        {"status_code": status, "headers": HeadersDict(headers), "body": body}, None)
    return status, error["Error"]["Code"]


@pytest.mark.parametrize(("kind", "status", "code"), [
    ("http_500", 500, "InternalError"), ("error_after", 500, "InternalError"),
    ("slow_down_503", 503, "SlowDown"), ("throttle", 503, "SlowDown")])
def test_s3_errors_are_rest_xml_with_s3_codes(kind: str, status: int, code: str) -> None:
    assert parsed_code(kind, "s3", "rest-xml", "GET") == (status, code)


@pytest.mark.parametrize("protocol", ["json", "query"])
@pytest.mark.parametrize(("kind", "status", "code"), [
    ("http_500", 500, "InternalFailure"), ("slow_down_503", 503, "ServiceUnavailable"),
    ("throttle", 400, "RequestThrottled")])
def test_sqs_errors_in_both_protocols_carry_sqs_codes(protocol: str, kind: str, status: int,
                                                       code: str) -> None:
    assert parsed_code(kind, "sqs", protocol) == (status, code)


def test_head_errors_have_no_body() -> None:
    assert error_response("slow_down_503", "s3", "HEAD", json_protocol=False)[2] == b""


@pytest.mark.parametrize(("service", "protocol"), [("s3", "rest-xml"), ("sqs", "json")])
def test_throttle_is_a_code_botocore_retries_as_throttling(service: str, protocol: str) -> None:
    status, code = parsed_code("throttle", service, protocol)
    context = RetryContext(attempt_number=1, parsed_response={"Error": {"Code": code}},
                           http_response=type("R", (), {"status_code": status})())
    assert ThrottledRetryableChecker().is_retryable(context)
