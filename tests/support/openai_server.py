"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API, scripted by tests.

    with ScriptedOpenAIServer(lambda request: Reply(content='{"relevance_score": 3}')) as server:
        provider = OpenAIProvider(model="judge", base_url=server.base_url, api_key="test")

The responder gets the parsed request body (a dict) and returns a `Reply`: an HTTP status, the
assistant message content (a string, usually JSON) or a raw error body, an optional delay in
seconds and token counts. Every request is recorded in `server.requests` (its headers, names in
lower case, in `server.request_headers`). Hostile replies: `trickle` sends the response one byte at a time
(from the status line, or from the body with `trickle_body`) for at most `trickle_for` seconds,
then the rest at once; `omit_length` sends no Content-Length and closes the connection after
the body. The server only binds
to 127.0.0.1 and shuts down when the `with` block ends.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = "{}"
    status: int = 200
    delay: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    raw_body: str | bytes | None = None  # sent verbatim instead of a completion (error bodies, garbage)
    headers: dict[str, str] | None = None
    trickle: float = 0.0  # seconds between bytes; 0 = send the response at once
    trickle_body: bool = False  # trickle only the body, not the status line and headers
    trickle_for: float = 4.0  # after this many seconds of trickling the rest goes at once
    omit_length: bool = False


Responder = Callable[[dict[str, Any]], Reply]


def json_reply(payload: Any, **kwargs: Any) -> Reply:
    return Reply(content=json.dumps(payload), **kwargs)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out and hung up is expected in fault tests; anything else is not.
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class ScriptedOpenAIServer:
    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Without this, headers and body leave in separate packets and Nagle + delayed ACKs
            # add ~40 ms to every response.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.request_headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server.responder(body)
                if reply.delay:
                    time.sleep(reply.delay)
                if isinstance(reply.raw_body, bytes):
                    payload = reply.raw_body
                elif reply.raw_body is not None:
                    payload = reply.raw_body.encode()
                elif reply.status >= 400:
                    payload = json.dumps(
                        {"error": {"message": f"scripted {reply.status}", "type": "server_error"}}
                    ).encode()
                else:
                    payload = json.dumps(_completion(body, reply)).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.omit_length:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                else:
                    self.send_header("Content-Length", str(len(payload)))
                for key, value in (reply.headers or {}).items():
                    self.send_header(key, value)
                if not reply.trickle:
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self._headers_buffer.append(b"\r\n")  # end_headers without the flush
                head = b"".join(self._headers_buffer)
                self._headers_buffer = []
                if reply.trickle_body:
                    self.wfile.write(head)
                    self.wfile.flush()
                _trickle(self.wfile, payload if reply.trickle_body else head + payload, reply)

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _trickle(stream: Any, data: bytes, reply: Reply) -> None:
    """Write `data` a byte at a time, `reply.trickle` seconds apart, for at most `trickle_for`."""
    stop = time.monotonic() + reply.trickle_for
    for position in range(len(data)):
        if time.monotonic() > stop:
            stream.write(data[position:])
            break
        stream.write(data[position : position + 1])
        stream.flush()
        time.sleep(reply.trickle)
    stream.flush()


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        },
    }


def last_user_message(request: dict[str, Any]) -> str:
    """The text of the last user message of a chat request (what scripted judges read)."""
    for message in reversed(request.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content)
            return content or ""
    return ""
