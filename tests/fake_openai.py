"""A loopback OpenAI-compatible server for the drafting tests: POST /v1/chat/completions only.

Each test scripts the replies (a queue; the last one repeats) and then reads `server.requests` to
see exactly what the client sent. A reply can also play the servers people run: a 422 for a
response_format (TGI), a refused `temperature` (reasoning models), a template that needs alternating
roles (many local models), a reply cut at the length limit, a stream that hangs half-way. Streaming follows the real wire format: `data: {chunk}\\n\\n` per
delta, an optional usage chunk, then `data: [DONE]`.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from loopback_server import LoopbackHTTPServer


@dataclass
class Reply:
    content: str = ""  # assistant text (streamed in pieces when the request asks for a stream)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None  # error message for a non-200 reply
    delay: float = 0.0  # seconds before the response starts (a slow server)
    chunk_delay: float = 0.0  # seconds between streamed pieces
    chunk_size: int = 16
    reject_response_format: str | None = None  # answer with `reject_status` if the request uses this type
    reject_status: int = 400  # 400 (OpenAI, vLLM) or 422 (TGI: "Failed to deserialize the JSON body")
    usage: bool = True  # send a usage chunk / field
    finish_reason: str = "stop"  # "length": the reply was cut at the token limit
    refuse_params: tuple[str, ...] = ()  # answer 400 naming the first of these the request carries
    alternating_roles: bool = False  # a chat template that raises unless user/assistant alternate
    stall_after: float = 0.0  # a hung stream: send the first piece, then nothing for this many seconds


def brief_json(lang: str = "zh", **over: Any) -> str:
    if lang == "zh":
        d = {
            "language": "zh",
            "headline": "修复权重同步中的 ACK 竞态",
            "verdict": "deep",
            "minutes": None,
            "audience": None,
            "summary": "它演示了如何把性能优化还原成跨进程竞态修复。",
            "focus": ["`sync.py` 中 `_cleanup` 之后才发送最后一帧 ACK", "`_ack_pending` 守卫维持收发节奏"],
            "open_items": ["接收方异常时发送方可能永久阻塞"],
            "next_steps": ["关注 #7366 的 ACK 超时"],
        }
    else:
        d = {
            "language": "en",
            "headline": "Fix the ACK race in weight sync",
            "verdict": "skim",
            "minutes": 4,
            "audience": None,
            "summary": "It shows how a performance tweak turned out to be a cross-process race fix.",
            "focus": [
                "`sync.py` sends the last ACK after `_cleanup`",
                "the `_ack_pending` guard keeps the socket alternating",
            ],
            "open_items": ["the sender can block forever when the receiver fails"],
            "next_steps": ["watch #7366 for the ACK timeout"],
        }
    d.update(over)
    return json.dumps(d, ensure_ascii=False)


def _alternates(messages: list[dict]) -> bool:
    """What strict chat templates check: after an optional system turn, user and assistant alternate."""
    roles = [m.get("role") for m in messages if m.get("role") != "system"]
    return bool(roles) and roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))


class FakeOpenAI:
    def __init__(self, replies: list[Reply] | None = None):
        self.replies: list[Reply] = list(replies or [Reply(brief_json())])
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"}
        self._lock = threading.Lock()
        self._served = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # keep test output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    reply = server.replies[min(server._served, len(server.replies) - 1)]
                    server._served += 1
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._json(404, {"error": {"message": f"no route {self.path}"}})
                if reply.delay:
                    time.sleep(reply.delay)
                rf = (body.get("response_format") or {}).get("type")
                if reply.reject_response_format and rf == reply.reject_response_format:
                    msg = (
                        f"response_format {rf} is not supported"
                        if reply.reject_status == 400
                        else "Failed to deserialize the JSON body into the target type: unknown variant"
                    )
                    return self._json(
                        reply.reject_status, {"error": {"message": msg, "type": "invalid_request_error"}}
                    )
                refused = next((p for p in reply.refuse_params if p in body), None)
                if refused:
                    # what OpenAI says to a reasoning model's request with a sampling parameter
                    msg = f"Unsupported parameter: '{refused}' is not supported with this model."
                    return self._json(400, {"error": {"message": msg, "type": "invalid_request_error"}})
                if reply.alternating_roles and not _alternates(body.get("messages") or []):
                    msg = "Conversation roles must alternate user/assistant/user/assistant/..."
                    return self._json(400, {"error": {"message": msg, "type": "BadRequestError"}})
                if reply.status != 200:
                    return self._json(
                        reply.status,
                        {"error": {"message": reply.error or "error", "type": "server_error"}},
                        reply.headers,
                    )
                if body.get("stream"):
                    return self._stream(body, reply)
                usage = (
                    {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
                    if reply.usage
                    else None
                )
                out = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.content},
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                }
                if usage:
                    out["usage"] = usage
                return self._json(200, out)

            def _json(self, status, obj, headers=None):
                data = json.dumps(obj, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body, reply: Reply):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True
                base = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model"),
                }

                def send(obj):
                    payload = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
                    self.wfile.write(f"data: {payload}\n\n".encode())
                    self.wfile.flush()

                try:
                    send(
                        {
                            **base,
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None,
                                }
                            ],
                        }
                    )
                    text = reply.content
                    for i in range(0, len(text), reply.chunk_size):
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                        if reply.stall_after and i > 0:
                            time.sleep(reply.stall_after)
                        send(
                            {
                                **base,
                                "choices": [
                                    {
                                        "index": 0,
                                        "delta": {"content": text[i : i + reply.chunk_size]},
                                        "finish_reason": None,
                                    }
                                ],
                            }
                        )
                    send(
                        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]}
                    )
                    if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
                        send(
                            {
                                **base,
                                "choices": [],
                                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
                            }
                        )
                    send("[DONE]")
                except (BrokenPipeError, ConnectionResetError):  # the client cancelled
                    pass

        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply) -> FakeOpenAI:
        with self._lock:
            self.replies = list(replies)
            self._served = 0
            self.requests.clear()
        return self

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
