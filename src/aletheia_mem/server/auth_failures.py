"""Failed authentications, counted per client address so that guessing tokens is slow and
cannot fill the audit trail."""

from __future__ import annotations

import time
from collections.abc import Callable

from aletheia_mem.server.ratelimit import RateLimiter

FAILURES_PER_MINUTE = 20  # per client address
AUDITED_PER_MINUTE = 120  # audit rows of failures, every address together


class AuthFailures:
    """Counts failures per address; past ``per_client`` a minute the address waits, and past
    ``audited`` a minute (all addresses) failures are no longer written to the audit trail."""

    def __init__(
        self,
        per_client: int = FAILURES_PER_MINUTE,
        audited: int = AUDITED_PER_MINUTE,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clients = RateLimiter(per_client, monotonic=monotonic)
        self._audited = RateLimiter(audited, monotonic=monotonic)

    def waiting(self, client: str) -> int | None:
        """The seconds ``client`` must wait after failing too often (None: it may try), so that
        aletheia-server can refuse its next key unread, the right one too: else a throttled
        address goes on guessing at full speed, told only which guesses failed."""
        return self._clients.waiting(client)

    def fail(self, client: str) -> tuple[int | None, bool]:
        """Count one failure from ``client``: the seconds it must wait (None: answer 401), and
        whether this failure gets an audit row (only those answered 401, within the cap)."""
        wait = self._clients.hit(client)
        return wait, wait is None and self._audited.hit("") is None
