"""The error answers a fault sends, in each service's real wire shape and with AWS's codes
(standard library only: the mitmproxy addon loads this file by path)."""

from __future__ import annotations

import json
import uuid

# kind -> (status, code, message) per service family
_S3 = {"http_500": (500, "InternalError", "We encountered an internal error. Please try again."),
       "error_after": (500, "InternalError", "We encountered an internal error. Please try again."),
       "slow_down_503": (503, "SlowDown", "Please reduce your request rate."),
       "throttle": (503, "SlowDown", "Please reduce your request rate.")}
_QUERY = {"http_500": (500, "InternalFailure", "The request processing has failed because of an "
                                               "unknown error, exception or failure."),
          "slow_down_503": (503, "ServiceUnavailable", "The request has failed due to a temporary "
                                                       "failure of the server."),
          "throttle": (400, "RequestThrottled", "The request was denied due to request throttling.")}
_QUERY["error_after"] = _QUERY["http_500"]


def error_response(kind: str, service: str, method: str, json_protocol: bool) -> tuple[
        int, dict[str, str], bytes]:
    """Status, headers and body of the error answer for fault `kind`.

    Shapes follow what AWS sends and what botocore parses: S3 REST-XML `<Error>` (no body on
    HEAD); SQS JSON protocol `__type` plus the `x-amzn-query-error` header (botocore takes the
    code from it); SQS query protocol `<ErrorResponse>`. Throttling is S3 503 SlowDown and SQS
    400 RequestThrottled, codes botocore's standard and adaptive retry modes treat as throttling.

    Args:
        kind: http_500, slow_down_503, throttle or error_after.
        service: the signing name (s3, sqs, ...).
        method: the request's HTTP method (a HEAD answer has no body).
        json_protocol: the request used the JSON protocol (X-Amz-Target), not the query protocol.
    """
    request_id = uuid.uuid4().hex.upper()[:16]
    if service == "s3":
        status, code, message = _S3[kind]
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>'
                f"{message}</Message><RequestId>{request_id}</RequestId></Error>").encode()
        headers = {"Content-Type": "application/xml", "x-amz-request-id": request_id}
        return status, headers, b"" if method.upper() == "HEAD" else body
    status, code, message = _QUERY[kind]
    if service != "sqs" and code == "RequestThrottled":
        code = "Throttling"  # the query-protocol services' common throttling code
    if json_protocol:
        body = json.dumps({"__type": f"com.amazonaws.{service}#{code}", "message": message}).encode()
        fault = "Sender" if status < 500 else "Receiver"
        return status, {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": request_id,
                        "x-amzn-query-error": f"{code};{fault}"}, body
    body = (f"<ErrorResponse><Error><Type>{'Sender' if status < 500 else 'Receiver'}</Type>"
            f"<Code>{code}</Code><Message>{message}</Message></Error>"
            f"<RequestId>{request_id}</RequestId></ErrorResponse>").encode()
    return status, {"Content-Type": "text/xml", "x-amzn-RequestId": request_id}, body
