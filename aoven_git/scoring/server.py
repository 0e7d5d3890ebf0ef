"""The scoring page's HTTP server: stdlib `ThreadingHTTPServer` on 127.0.0.1 only.

Three guards, because a score sheet is the thing a study must keep from other eyes and hands
(docs/score-files.md, "The scoring page"): the socket is bound to 127.0.0.1; a request from any
other client address is refused; and the Host header must be `127.0.0.1:<port>` or
`localhost:<port>`, so a web page that re-binds its own DNS name to 127.0.0.1 cannot read the page
(DNS rebinding). A POST must carry `Content-Type: application/json` and, when the browser sends
one, an Origin of this server: a cross-site form cannot send that without a CORS preflight, which
this server never answers, so no other page can write the sheet. Every answer is JSON or the page;
a bad request is a 4xx with `{"error": …}`, never a traceback. The server never commits.
"""

from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from aoven_git.scoring.content import BadRequest, ScorePage, entries_of, payload, validation, write_sheet

HOST = "127.0.0.1"
#: the largest POST body read (500 questions × 8 dimensions with quotes fit easily)
MAX_BODY = 8 * 1024 * 1024
#: the page may load nothing from anywhere but itself
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def page_html() -> bytes:
    """The self-contained page (inline CSS and JS, no network beyond this server's API)."""
    return resources.files("aoven_git").joinpath("templates/score_page.html").read_bytes()


class ScoreServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, page: ScorePage, port: int, *, selftest: bool = False) -> None:
        self.page = page
        self.selftest = selftest
        self.lock = threading.Lock()  # one write (and its validation) at a time
        self.html = page_html()
        super().__init__((HOST, port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that closes its tab mid-answer is not an error; anything else is one line on
        stderr, never a traceback (the request itself already got a 500 from `_Handler`)."""
        import sys

        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            print(f"aoven-git score: {type(exc).__name__}: {exc}", file=sys.stderr)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


class _Handler(BaseHTTPRequestHandler):
    server: ScoreServer
    server_version = "aoven-git-score"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL, not every autosave."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _allowed(self) -> bool:
        """Loopback client and a loopback Host of this very port (the DNS-rebinding guard)."""
        if self.client_address[0] != HOST:
            self._error(403, "only 127.0.0.1 may use this page")
            return False
        port = self.server.port
        if self.headers.get("Host", "") not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            self._error(403, f"Host must be 127.0.0.1:{port} or localhost:{port}")
            return False
        return True

    def handle_one_request(self) -> None:
        """A bug while answering is a 500 with `{"error": …}` and one line on stderr, not a
        traceback in the rater's terminal and a dropped connection."""
        try:
            super().handle_one_request()
        except ConnectionError:
            raise
        except Exception as exc:
            import sys

            print(f"aoven-git score: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
            with contextlib.suppress(OSError):
                self._error(500, f"internal error: {type(exc).__name__}: {exc}")
            self.close_connection = True

    def do_GET(self) -> None:
        if not self._allowed():
            return
        path = self.path.split("?", 1)[0]
        if path == "/":
            self._send(200, self.server.html, "text/html; charset=utf-8")
        elif path == "/api/sheet":
            with self.server.lock:
                body = payload(self.server.page, self.server.selftest)
            self._json(200, body)
        else:
            self._error(404, f"no such page: {path}")

    def do_POST(self) -> None:
        if not self._allowed():
            return
        if self.path.split("?", 1)[0] != "/api/sheet":
            self._error(404, "POST only to /api/sheet")
            return
        refusal = self._post_refusal()
        if refusal is not None:
            self._error(*refusal)
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw.decode("utf-8"))
            with self.server.lock:
                write_sheet(self.server.page, entries_of(self.server.page, body))
                report = validation(self.server.page)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._error(400, f"the body is not JSON: {exc}")
            return
        except BadRequest as exc:
            self._error(400, str(exc))
            return
        except OSError as exc:
            self._error(500, f"cannot write {self.server.page.path}: {exc.strerror or exc}")
            return
        self._json(200, {"written": self.server.page.path, "validate": report})

    def _post_refusal(self) -> tuple[int, str] | None:
        port = self.server.port
        origin = self.headers.get("Origin")
        if origin is not None and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
            return 403, "cross-origin writes are refused"
        if self.headers.get("Content-Type", "").split(";", 1)[0].strip() != "application/json":
            return 415, "Content-Type must be application/json"
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            return 411, "Content-Length is required"
        if length < 0 or length > MAX_BODY:
            return 413, f"the body may be at most {MAX_BODY} bytes"
        return None

    def do_PUT(self) -> None:
        if self._allowed():
            self._error(405, "only GET / and GET or POST /api/sheet")

    do_DELETE = do_PATCH = do_PUT
