"""A small OpenAI-compatible server for tests, on 127.0.0.1: scripted answers, recorded requests.

It counts the requests in flight at once (`in_flight`, the most so far `most_in_flight`), and with
`hold_until` = N holds requests in groups of N arrivals, each until its group has all arrived (or
`hold_seconds` pass), so N calls that overlap are all in flight together: a test
proves calls overlap, or that a cap keeps them under N, by what the server saw, never by timing.

Each scripted answer is a dict: {"status": 200, "body": {...} | "raw text", "delay": seconds,
"headers": {...}, "no_length": True (no Content-Length: the body ends when the connection closes)}, or a function of the request's JSON body returning one. `chat_json(obj)` and
`chat_text(text)` build the usual 200 answers.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chat_body(content: str, *, prompt_tokens: int = 11, completion_tokens: int = 7) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def chat_json(obj) -> dict:
    return {"status": 200, "body": chat_body(json.dumps(obj))}


def chat_text(text: str) -> dict:
    return {"status": 200, "body": chat_body(text)}


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # socketserver's 5 would make calls at once wait for a SYN retry (1 s, 3 s)


class FakeOpenAI:
    def __init__(self):
        self.script: list[dict] = []
        self.requests: list[dict] = []
        self.default: dict | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.in_flight = 0
        self.most_in_flight = 0
        self.hold_until: int | None = None
        self.hold_seconds = 20.0
        self._arrived = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": body}
                    )
                    answer = server.script.pop(0) if server.script else server.default
                server._enter()
                try:
                    self._answer(body, answer)
                finally:
                    server._leave()

            def _answer(self, body, answer):
                if callable(answer):  # an answer computed from the request (tests that serve many end users)
                    answer = answer(body)
                if answer is None:
                    answer = {"status": 500, "body": {"error": {"message": "no scripted answer"}}}
                if answer.get("delay"):
                    time.sleep(answer["delay"])
                payload = answer["body"]
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(answer.get("status", 200))
                    self.send_header("Content-Type", "application/json")
                    for key, value in answer.get("headers", {}).items():
                        self.send_header(key, value)
                    if not answer.get("no_length"):
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _enter(self):
        with self._changed:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self._arrived += 1
            self._changed.notify_all()
            if self.hold_until:  # requests go in groups of hold_until arrivals: each waits for its group
                group_end = -(-self._arrived // self.hold_until) * self.hold_until
                self._changed.wait_for(lambda: self._arrived >= group_end, timeout=self.hold_seconds)

    def _leave(self):
        with self._changed:
            self.in_flight -= 1
            self._changed.notify_all()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
