"""An HTTP gate between Spark's S3A and the S3 emulator that holds a job's commit (the classic
committer's copies into place, the magic committer's upload completions) until the test releases
it, so a loader can run while the tasks' objects are there and the job's are not yet."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

HOLD_SECONDS = 300.0
"""A gate never released lets the commit through after this (the test then fails on its rows)."""
HOP_BY_HOP = {"connection", "content-length", "date", "expect", "server", "transfer-encoding"}


def commit_kind(method: str, path: str, headers: Any) -> str | None:
    """'rename' for a copy to a key outside `_temporary/`, 'complete' for CompleteMultipartUpload."""
    if method == "PUT" and headers.get("x-amz-copy-source") and "/_temporary/" not in path:
        return "rename"
    if method == "POST" and "uploadId=" in (urlsplit(path).query or ""):
        return "complete"
    return None


class CommitGate:
    """Forwards every request to `upstream`; holds the commit requests until `release()`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.held: set[str] = set()
        self._cond = threading.Condition()
        self._open = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> CommitGate:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def wait_for(self, kinds: Iterable[str], timeout: float) -> bool:
        """True once a commit request of every kind is held."""
        with self._cond:
            return self._cond.wait_for(lambda: set(kinds) <= self.held, timeout)

    def release(self) -> None:
        with self._cond:
            self._open = True
            self._cond.notify_all()

    def hold(self, kind: str) -> None:
        with self._cond:
            self.held.add(kind)
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._open, HOLD_SECONDS)


def _handler(gate: CommitGate) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet: one line per request otherwise
            pass

        def _body(self) -> bytes:
            if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0], 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _forward(self) -> None:
            body = self._body()
            kind = commit_kind(self.command, self.path, self.headers)
            if kind:
                gate.hold(kind)
            conn = http.client.HTTPConnection(gate.upstream.hostname or "", gate.upstream.port, timeout=600)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Content-Length"] = str(len(body))
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            length = resp.getheader("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    return Forward
