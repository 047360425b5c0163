"""The hub's sync API: JSON under ``/sync/``, for ``sync`` and ``admin`` tokens.

- ``POST /sync/hello``: the hub's id, the token's id, scope and projects, page limits.
- ``POST /sync/push`` ``{"store_id", "records"}``: apply one page of a store's changes; the
  answer counts the records applied, skipped (known already) and merged (made one with an item
  the hub had, which the store reports as merged at the hub). An item the token creates, or
  whose words it changes, is authored ``<token name>/<tool the store named>`` (``sender_author``).
- ``POST /sync/pull`` ``{"store_id", "cursor", "limit"}``: the changes after a cursor, without
  the versions the asking store made itself.

Each request waits at most ``STORE_WAIT_MS`` for a SQLite store's write lock that another process
holds (a long ``aletheia import``), then answers 503 with ``Retry-After`` and the store's busy
line; nothing of the page is written. A push and its audit row are one transaction.

A store syncs with one token: the first token to name a store id holds it until that token is
revoked, and then only a token made after the revocation may take it (every pull names other
stores' ids, so a token made before may have learned it); each claim that binds a store is
audited (``sync-claim``). A push carries only versions of the pushing store. A pull leaves out a
store's own versions by their origin, so a token naming another store as the origin of its
versions would hide its changes from that store. No request may name the hub's own store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, cast

from anyio import to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from aletheia_mem.domain.import_check import is_uid
from aletheia_mem.errors import (
    AletheiaError,
    ForbiddenError,
    InvalidInputError,
    StoreBrokenError,
    StoreBusyError,
    StoreFullError,
    StoreReadOnlyError,
    StoreTooNewError,
    StoreUnavailableError,
)
from aletheia_mem.hub import audit
from aletheia_mem.hub.audit_queue import AuditQueue
from aletheia_mem.hub.tokens import can_write, revoke_command
from aletheia_mem.hub.write_turns import WriteTurns
from aletheia_mem.json_objects import RepeatedKeyError
from aletheia_mem.server.api import RETRY_AFTER_S
from aletheia_mem.server.guard import Refusal
from aletheia_mem.server.http import UNAVAILABLE
from aletheia_mem.server.stdio import NotJsonNumber, json_value_once, utf8_text
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.contracts import AuditsWithWrites
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.hub_rows import HubToken, StoreClaim
from aletheia_mem.storage.write_waits import waiting_at_most
from aletheia_mem.sync.records import check_records
from aletheia_mem.sync.validate import (
    sendable_references,
    unsendable,
    validate_records,
)
from aletheia_mem.tools.app import AppContext

# How a SQLite hub's store is named to clients (never by its file's path), as in its busy line:
# another process keeps it busy, said as such.
HUB_STORE = "of the hub"
HUB_BUSY = StoreBusyError(HUB_STORE).message

logger = logging.getLogger(__name__)

PROTOCOL = 1
# How long a sync request waits for another process's write lock on a SQLite hub store before
# it answers the busy line (as a new MCP session does), rather than the 30 s a tool's write waits.
STORE_WAIT_MS = 2_000
MAX_RECORDS = 1000
MAX_PAGE_BYTES = 4 * 1024 * 1024
# A request's reply and its audit row's detail (None: written with the request's own write).
Answer = tuple[dict[str, Any], str | None]
Work = Callable[[HubToken, dict[str, Any]], Answer]
WITHHELD_EVENT = "sync-withheld"
MAX_TOLD = 1000  # audit rows of held-back records read back when a hub starts
# Why a record is left out of every pull page when it is larger than a page may carry (an
# earlier release took it; this one bounds every record it keeps: ``MAX_RECORD_BYTES``).
OVERSIZED = "larger than a pull page may carry (4 MiB)"
_STATUS = {"invalid_input": 400, "forbidden": 403, "not_found": 404, "conflict": 409}


# A store failure under a sync request (its token's check included): nothing to audit it in.
STORE_FAILURES = (StoreUnavailableError, StoreReadOnlyError, StoreBrokenError, StoreTooNewError)
_RETRY = (("retry-after", str(RETRY_AFTER_S)),)


def store_refusal(error: AletheiaError) -> Refusal:
    """How ``/sync/`` tells one of ``STORE_FAILURES``, naming no file: 507 with the store-full
    line (as the hub's tools and MCP initialize), 503 with the busy line, the newer version's
    line, or that the store cannot be reached (also when it is read-only or damaged)."""
    if isinstance(error, StoreTooNewError):
        return Refusal(503, error.code, error.message)
    if isinstance(error, StoreFullError):
        return Refusal(507, error.code, StoreFullError(HUB_STORE).message, _RETRY)
    if isinstance(error, StoreBusyError):
        return Refusal(503, "unavailable", HUB_BUSY, _RETRY)
    if isinstance(error, StoreUnavailableError):
        return Refusal(503, "unavailable", UNAVAILABLE, _RETRY)
    return Refusal(503, "unavailable", UNAVAILABLE)  # read-only or damaged: not soon over


def _store_failed(error: AletheiaError) -> JSONResponse:
    """``store_refusal`` as a reply, the failure in one line of the log."""
    logger.warning("Sync request failed: %s", error.message)
    refused = store_refusal(error)
    body = {"error": {"code": refused.code, "message": refused.message}}
    return JSONResponse(body, refused.status, headers=dict(refused.headers))


def _error(error: AletheiaError) -> JSONResponse:
    body = {"error": {"code": error.code, "message": error.message}}
    return JSONResponse(body, status_code=_STATUS.get(error.code, 400))


async def _body(request: Request) -> dict[str, Any]:
    try:
        text = utf8_text(await request.body())  # guessed by json.loads, a UTF-16 one was read
    except UnicodeDecodeError:
        raise InvalidInputError("The body is not UTF-8.") from None
    try:
        value = json_value_once(text)
    except RepeatedKeyError:  # two ``store_id``: the last to this hub, the first to a proxy
        raise InvalidInputError("The body must not give any key twice.") from None
    except NotJsonNumber as error:
        raise InvalidInputError(
            f"The body is not JSON: it holds {error.name}, and JSON has no NaN or Infinity."
        ) from None
    except ValueError:
        raise InvalidInputError("The body must be a JSON object.") from None
    except RecursionError:  # the parser's own bound: no sync body nests so deep
        raise InvalidInputError(
            "The body nests lists and objects too deeply to read (no sync record nests more"
            " than a few levels)."
        ) from None
    if not isinstance(value, dict):
        raise InvalidInputError("The body must be a JSON object.")
    return value


def _store_id(body: dict[str, Any]) -> str:
    """The store id a body names: 32 lowercase hex digits, as every store makes its own (so
    the hub's own id in capitals is not another store)."""
    value = body.get("store_id")
    if not is_uid(value):
        raise InvalidInputError("store_id must be the store's id (32 lowercase hex digits).")
    return str(value)


def _own_versions(records: list[dict[str, Any]], store_id: str) -> None:
    """Refuse a push with a version another store made: a store pushes its own changes."""
    for record in records:
        if record["v"][1] != store_id:
            raise InvalidInputError(
                f"A store pushes its own changes only: {record['kind']} {record['key']!r}"
                " names another store as its origin."
            )


def _refusal(claim: StoreClaim) -> str:
    """Why a token may not sync a store another token holds, naming that token (never a
    secret) so that the hub's admin knows which one it is. Only a token made after the holder's
    revocation may take the store: never this one. A copy of another machine's data folder
    holds that machine's store (its id): it wants a folder of its own, which pulls everything;
    revoking the holder is for moving its own machine to a new token, and stops every store it
    syncs."""
    name = claim.holder or ""
    if claim.revoked:
        return (
            f'This store synced with the token "{name}", revoked after this token was made;'
            " only a token made after that revocation may sync it (aletheia mcp-link create)."
            " To sync with this token, use a data folder of its own (a new ALETHEIA_DATA_DIR):"
            " its first sync pulls everything."
        )
    return (
        f'This store syncs with another token, "{name}". If this data folder is a copy of'
        " another machine's, or another person's, give this token a data folder of its own"
        " (a new ALETHEIA_DATA_DIR): its first sync pulls everything. To move this store to a"
        f' new token, revoke "{name}" first ({revoke_command(name)}; it then syncs none of'
        " the stores it holds), then make the new one (aletheia mcp-link create)."
    )


def _whole(body: dict[str, Any], name: str, default: int) -> int:
    value = body.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**62:
        raise InvalidInputError(f"{name} must be a whole number.")
    return value


class SyncApi:
    """The three sync endpoints over one hub store."""

    def __init__(
        self, hub: AppContext, writes: WriteTurns, audits: AuditQueue | None = None
    ) -> None:
        self.hub = hub
        self.writes = writes
        # A pull's row (and a refusal's) is written at once while the writers' turn is free,
        # else moments later: a pull never waits behind the pushes, nor answers 503, for it.
        self.audits = audits or AuditQueue(hub_store(hub), writes)
        self._told: set[str] | None = None  # details of held-back records audited (_told_of)
        self._told_lock = threading.Lock()

    def routes(self) -> list[Route]:
        return [
            Route("/sync/hello", self.hello, methods=["POST"]),
            Route("/sync/push", self.push, methods=["POST"]),
            Route("/sync/pull", self.pull, methods=["POST"]),
        ]

    def _audit(self, token: HubToken, event: str, outcome: audit.Outcome, detail: str) -> None:
        self.audits.write(
            audit.event_entry(
                at=self.hub.clock(),
                actor=token.name,
                event=event,
                outcome=outcome,
                detail=detail,
                project=audit.token_scope(token.projects),
            )
        )

    def _bounded(self, work: Work, token: HubToken, body: dict[str, Any]) -> Answer:
        """``work`` on a worker thread, its writes waiting at most ``STORE_WAIT_MS``."""
        with waiting_at_most(STORE_WAIT_MS):
            return work(token, body)

    async def _run(self, request: Request, event: str, work: Work) -> JSONResponse:
        token: HubToken = request.state.token
        try:
            if not can_write(token.scope):
                raise ForbiddenError("This token cannot sync; it needs the sync or admin scope.")
            body = await _body(request)
            reply, detail = await to_thread.run_sync(self._bounded, work, token, body)
            if detail is not None and event != "sync-hello":
                await to_thread.run_sync(self._audit, token, event, "ok", detail)
        except STORE_FAILURES as error:  # nothing to audit in: said to the log
            return _store_failed(error)
        except AletheiaError as error:
            outcome: audit.Outcome = "refused" if error.code == "forbidden" else "error"
            try:
                await to_thread.run_sync(self._audit, token, event, outcome, error.code)
            except STORE_FAILURES as failed:
                return _store_failed(failed)
            return _error(error)
        return JSONResponse(reply)

    async def hello(self, request: Request) -> JSONResponse:
        return await self._run(request, "sync-hello", self._hello)

    async def push(self, request: Request) -> JSONResponse:
        return await self._run(request, "sync-push", self._push)

    async def pull(self, request: Request) -> JSONResponse:
        return await self._run(request, "sync-pull", self._pull)

    def _store_id(self, body: dict[str, Any]) -> str:
        """The store id the body names, which must not be the hub's own: the hub's versions
        are its own to make, and a pull naming it would leave them out."""
        store_id = _store_id(body)
        if store_id == hub_store(self.hub).sync_store_id():
            raise InvalidInputError("This is the hub's own store; sync another store with it.")
        return store_id

    def _claim(self, token: HubToken, store_id: str) -> str:
        """``store_id``, once it is known to sync with this token (a claim that binds it is
        audited in its transaction, naming the store and the revoked token it took it from)."""
        now = self.hub.clock()

        def claimed(previous: str | None) -> AuditEntry:
            detail = f"store {store_id}"
            if previous is not None:
                detail += f" (taken from the revoked token {previous})"
            return audit.event_entry(
                at=now,
                actor=token.name,
                event="sync-claim",
                outcome="ok",
                detail=detail,
                project=audit.token_scope(token.projects),
            )

        store = hub_store(self.hub)
        try:  # a store already bound is only read: no turn to wait for
            with waiting_at_most(0):
                claim = store.claim_sync_store(store_id, token, now, claimed)
        except StoreBusyError:  # binding it writes: in turn with the hub's other writers
            with self.writes:
                claim = store.claim_sync_store(store_id, token, now, claimed)
        if claim.holder is not None:
            raise ForbiddenError(_refusal(claim))
        return store_id

    def _hello(self, token: HubToken, body: dict[str, Any]) -> Answer:
        self._claim(token, self._store_id(body))
        reply = {
            "protocol": PROTOCOL,
            "hub_id": hub_store(self.hub).sync_store_id(),
            "token": {
                "id": token.id,
                "name": token.name,
                "scope": token.scope,
                "projects": None if token.projects is None else list(token.projects),
            },
            "max_records": MAX_RECORDS,
            "max_page_bytes": MAX_PAGE_BYTES,
        }
        return reply, ""

    def _push(self, token: HubToken, body: dict[str, Any]) -> Answer:
        store_id = self._store_id(body)
        now = self.hub.clock()
        sent = check_records(body.get("records"), MAX_RECORDS)
        records = validate_records(sent, now)
        # what the checks changed gets a version of the hub's, so it travels back to the sender
        rewritten = frozenset(n for n, record in enumerate(records) if record != sent[n])
        _own_versions(records, store_id)
        self._claim(token, store_id)
        store = hub_store(self.hub)
        entry = audit.event_entry(
            at=now,
            actor=token.name,
            event="sync-push",
            outcome="ok",
            detail=f"{len(records)} records",
            project=audit.token_scope(token.projects),
        )
        # The page and its audit row in one transaction, the hub's writers taking turns.
        riding = cast("AuditsWithWrites", store).audit_with_next_write(entry)
        with self.writes, riding:
            stats = store.apply_changes(
                records,
                projects=token.projects,
                now=now,
                author=token.name,
                rewritten=rewritten,
            )
        reply = {"applied": stats.applied, "skipped": stats.skipped, "merged": stats.merged}
        return reply, None

    def _pull(self, token: HubToken, body: dict[str, Any]) -> Answer:
        cursor, limit = _whole(body, "cursor", 0), _whole(body, "limit", MAX_RECORDS)
        store_id = self._claim(token, self._store_id(body))
        page = hub_store(self.hub).export_changes(
            after=cursor,
            limit=max(1, min(limit, MAX_RECORDS)),
            max_bytes=MAX_PAGE_BYTES,
            local_only=False,
            exclude_origin=store_id,
            projects=token.projects,
        )
        records, withheld = self._sendable(token, page.records)
        for record in page.oversized:
            withheld[OVERSIZED] = withheld.get(OVERSIZED, 0) + 1
            self._tell_withheld(token, record, OVERSIZED)
        reply = {"records": records, "cursor": page.cursor, "more": page.more}
        if withheld:
            reply["withheld"] = withheld
        return reply, f"{len(records)} records"

    def _sendable(
        self, token: HubToken, records: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """A pull page without the records no store takes (``unsendable``: an earlier release
        took them on push), and how many were held back for each reason. Each is audited and
        logged once (by its kind, a digest of its id and version: never the id, which may hold
        a secret); the cursor passes it, so every pull goes on."""
        sent: list[dict[str, Any]] = []
        withheld: dict[str, int] = {}
        for record in records:
            reason = unsendable(record)
            if reason is None:
                sent.append(sendable_references(record))
                continue
            withheld[reason] = withheld.get(reason, 0) + 1
            self._tell_withheld(token, record, reason)
        return sent, withheld

    def _tell_withheld(self, token: HubToken, record: dict[str, Any], reason: str) -> None:
        named = json.dumps([record["kind"], record["key"], record["v"]], ensure_ascii=False)
        digest = hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        detail = f"{record['kind']} {digest} left out of every pull: {reason}"
        with self._told_lock:
            told = self._told_of()
            if detail in told:
                return
            told.add(detail)
        logger.warning("Sync pull: %s (run by the token %s).", detail, token.name)
        self._audit(token, WITHHELD_EVENT, "refused", detail)

    def _told_of(self) -> set[str]:
        """The held-back records audited already: by this process, and (read the first time)
        the newest rows of the audit trail, so that a restarted hub does not audit them again."""
        if self._told is None:
            rows = hub_store(self.hub).list_audit_page(MAX_TOLD, None, WITHHELD_EVENT)
            self._told = {row.detail for row in rows if row.detail is not None}
        return self._told
