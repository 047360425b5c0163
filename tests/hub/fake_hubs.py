"""Servers that answer ``aletheia sync`` as a hub might, and worse: each a handler class that
says what a POST gets (``answer``), served on a free 127.0.0.1 port by ``serving``."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.threaded_server import served

HUB_ID = "b" * 32


def hello(projects: list[str] | None = None) -> dict[str, Any]:
    """A hub's answer to ``/sync/hello`` for a sync token named ``x``."""
    token = {"id": 1, "name": "x", "scope": "sync", "projects": projects}
    return {"hub_id": HUB_ID, "token": token, "max_records": 1000}


class FakeHub(BaseHTTPRequestHandler):
    """Reads a POST whole, then sends what ``answer`` gives for its path."""

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        """The status, body and headers a POST to ``self.path`` gets."""
        raise NotImplementedError

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        status, body, headers = self.answer()
        self.send_response(status)
        for name, value in {"content-length": str(len(body)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


def as_json(body: dict[str, Any], status: int = 200) -> tuple[int, bytes, dict[str, str]]:
    return status, json.dumps(body).encode(), {"content-type": "application/json"}


def serving(handler: type[BaseHTTPRequestHandler]) -> AbstractContextManager[str]:
    """``handler`` served on a free 127.0.0.1 port while the block runs; yields its URL."""
    return served(ThreadingHTTPServer(("127.0.0.1", 0), handler))
