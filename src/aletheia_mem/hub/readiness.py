"""``GET /healthz``: whether this hub process can serve, for a load balancer's health checks.

200 while the store answers and its schema is the one this process knows; 503 when the store
cannot be reached, or when a newer version has migrated it (a rolling upgrade: this process then
refuses every write, so the balancer should send it nothing more). No token: nothing is read
but the schema's number, nothing is written or audited, and the answer names neither the store
nor the failure (the process's log does).
"""

from __future__ import annotations

import logging

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from aletheia_mem.errors import StoreTooNewError, StoreUnavailableError
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.tools.app import AppContext

OUTDATED = (
    "A newer version of Aletheia migrated the store while this process ran; it refuses every"
    " write. Restart it with the new version."
)
UNREACHABLE = "The store cannot be reached."

logger = logging.getLogger(__name__)


def readiness_route(hub: AppContext) -> Route:
    """``GET /healthz`` on the hub's store: one read of its schema's number per request."""
    store = hub_store(hub)

    async def healthz(request: Request) -> JSONResponse:
        try:
            schema = await to_thread.run_sync(store.check_schema)
        except StoreTooNewError as error:
            logger.warning("Not ready: %s", error.message)
            return JSONResponse({"status": "outdated", "message": OUTDATED}, 503)
        except StoreUnavailableError as error:
            logger.warning("Not ready: %s", error.message)
            return JSONResponse({"status": "unavailable", "message": UNREACHABLE}, 503)
        return JSONResponse({"status": "ok", "schema": schema})

    return Route("/healthz", healthz, methods=["GET"])
