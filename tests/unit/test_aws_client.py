"""The boto3 clients lakeinlet makes ask for persistent connections."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from lakeinlet.aws import AwsSection, client

pytestmark = pytest.mark.unit


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str | None, int]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Recorder.seen.append((self.headers.get("Connection"), self.client_address[1]))
        body = b'{"Messages": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        if self.headers.get("Connection", "").lower() != "keep-alive":
            self.send_header("Connection", "close")  # as LocalStack behind hypercorn does
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_sqs_calls_ask_for_keep_alive_and_reuse_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(k, v)
    _Recorder.protocol_version = "HTTP/1.1"
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sqs = client("sqs", AwsSection(endpoint_url=f"http://127.0.0.1:{server.server_port}"))
        url = f"http://127.0.0.1:{server.server_port}/000000000000/q"
        for _ in range(3):
            sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)
        sqs.close()
    finally:
        server.shutdown()
    assert [c for c, _ in _Recorder.seen] == ["keep-alive"] * 3
    assert len({port for _, port in _Recorder.seen}) == 1  # one TCP connection for the three calls
