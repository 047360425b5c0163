"""The HTTP app under a real uvicorn on 127.0.0.1, in a thread of the test (so that its clock
and its store are the test's)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from aletheia_mem.server.guard import make_policy
from aletheia_mem.server.http import create_app
from aletheia_mem.server.runner import bind
from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.tools.app import AppContext


@contextmanager
def served_app(app: AppContext, sessions: SessionStore) -> Iterator[int]:
    """Serve ``app`` (no API key) while the block runs; yields its port. Closes ``sessions``."""
    sock = bind("127.0.0.1", 0)
    config = uvicorn.Config(create_app(app, make_policy(None), sessions=sessions), lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        sessions.close()
