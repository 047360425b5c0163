"""The Facts and Rules pages and the Rules actions."""

from __future__ import annotations

from functools import partial
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.domain.echoes import redacted_echo
from aletheia_mem.domain.rules import already_saved
from aletheia_mem.domain.vocabulary import SCOPE_TIERS
from aletheia_mem.errors import InvalidInputError, NotFoundError
from aletheia_mem.tools.app import ALL_PROJECTS
from aletheia_mem.web import facts, rules
from aletheia_mem.web.base import (
    Handler,
    Ui,
    done_redirect,
    page_bound,
    safe_next,
    signed_done,
    submitted,
    whole_number,
)
from aletheia_mem.web.project_choice import project_choice
from aletheia_mem.web.render import page

RULE_ACTIONS = {"confirm", "disable"}
RULE_NOTICES = {"added": "Rule added.", "confirm": "Rule confirmed.", "disable": "Rule disabled."}
MAX_RULE_ID = 200
ODD_RULES_OFFSET = "This link's offset= is not a number of rules: the first rules are shown."
ODD_RULES_UPTO = "This link's upto= is not a rule's place: the rules are shown as they are now."
ODD_FACTS_UPTO = "This link's upto= is not a fact id: the history is shown as it is now."
ODD_FACTS_OLDER = "This link's older= is not a number of facts: the latest facts are shown."


def facts_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    params = request.query_params
    subject = submitted(params, "subject").strip()
    project = params.get("project", "").strip() or ALL_PROJECTS
    predicate = submitted(params, "predicate").strip()
    as_of = params.get("as_of", "").strip()
    dismissed = params.get("dismissed") == "1"
    # As the other pages' ``offset``: junk is the first page (and told), a huge one the last
    # fact; ``upto`` a fact id.
    bound = page_bound(params, "older", 15)
    found = (
        facts.history(
            ui.app, subject, project, predicate, as_of, bound.offset, bound.upto, dismissed
        )
        if subject
        else None
    )
    # A later page's link carries the first page's highest fact id; the first page is read anew.
    later = {"upto": found["upto"]} if found else {}
    return page(
        request,
        "facts.html",
        section="Facts",
        subject=subject,
        project=project,
        predicate=predicate,
        as_of=as_of,
        dismissed=dismissed,
        here=f"{request.url.path}?{request.url.query}",
        found=found,
        page_query=lambda older: urlencode(
            {"subject": subject, "project": project, "predicate": predicate, "as_of": as_of}
            | ({"dismissed": "1"} if dismissed else {})
            | ({"older": older} | later if older else {})
        ),
        notice=(bound.notice(ODD_FACTS_OLDER, ODD_FACTS_UPTO) if subject else None)
        or facts.fact_notice(ui.app, signed_done(request), params.get("fact", "")),
        index=[] if subject else facts.subject_index(ui.app, project),
        projects=project_choice(request, partial(facts.fact_projects, ui.app)),
    )


def fact_action(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Dismiss or Restore a fact, then back to the Facts page it was sent from (303)."""
    fact_id = whole_number(str(request.path_params["fact_id"]), 15)
    action = str(request.path_params["action"])
    if fact_id is None or action not in facts.FACT_ACTIONS:
        given = redacted_echo(str(request.path_params["fact_id"]))
        raise NotFoundError(f"No action {redacted_echo(action)!r} on fact {given!r}.")
    done = facts.act_on_fact(ui.app, fact_id, action)
    path, _, query = safe_next(form.get("next"), "/facts").partition("?")
    # The page as it was sent from, without the notice of an earlier action.
    kept = [(k, v) for k, v in parse_qsl(query) if k not in ("done", "fact", "signed")]
    back = "/facts?" + urlencode(kept) if path == "/facts" else "/facts"
    return done_redirect(request, back, [("done", done), ("fact", str(fact_id))])


def rules_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    return _rules_view(ui, request)


def _rules_view(
    ui: Ui,
    request: Request,
    status: int = 200,
    typed: dict[str, str] | None = None,
    error: str | None = None,
) -> Response:
    """The Rules page; ``typed`` keeps a refused Add form as it was sent, ``error`` says why."""
    done = signed_done(request)
    # As the other pages' offset= and upto= (a rule's place in the store): an odd one is told
    place = page_bound(request.query_params, "offset", 18)
    every, bound = rules.bounded_rules(ui.app, place.upto)
    offset = min(place.offset, max(len(every) - 1, 0))
    shown = every[offset : offset + rules.RULES_PER_PAGE]
    return page(
        request,
        "rules.html",
        status,
        section="Rules",
        typed=typed or {},
        error=error,
        rules=shown,
        offset=offset,
        total=len(every),
        next_offset=offset + len(shown) if offset + len(shown) < len(every) else None,
        previous_offset=max(offset - rules.RULES_PER_PAGE, 0) if offset else None,
        tiers=SCOPE_TIERS,
        upto=bound,
        notice=place.notice(ODD_RULES_OFFSET, ODD_RULES_UPTO)
        or _rule_notice(done, request.query_params.get("rule", ""), every),
    )


def _rule_notice(done: str, rule_id: str, every: list[dict[str, object]]) -> str | None:
    if done in ("exists", "enabled"):  # an identical rule, one that is there
        if not any(rule["id"] == rule_id for rule in every):
            return None
        return already_saved(rule_id, "enabled" if done == "enabled" else "exists")
    return RULE_NOTICES.get(done)


def rule_add(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    disabled = {rule["id"] for rule in rules.all_rules(ui.app) if not rule["enabled"]}
    try:
        saved = rules.add_rule(ui.app, form)
    except (InvalidInputError, NotFoundError) as refused:  # the form comes back as typed
        return _rules_view(ui, request, 400, form, refused.message)
    if saved["created"]:
        return done_redirect(request, "/rules", [("done", "added")])
    rule_id = saved["rule"]["id"]
    done = "enabled" if rule_id in disabled else "exists"  # an identical rule is enabled again
    return done_redirect(request, "/rules", [("done", done), ("rule", rule_id)])


def rule_action(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    rule_id = str(request.path_params["rule_id"])[:MAX_RULE_ID]
    action = str(request.path_params["action"])
    if action not in RULE_ACTIONS:
        raise NotFoundError(f"No action {redacted_echo(action)!r}.")
    rules.set_rule(ui.app, rule_id, action)
    return done_redirect(request, "/rules", [("done", action)])


STALE_PREVIEW = "The rules changed since the preview; review again."


def sync_preview(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    params = request.query_params
    places = rules.plan_places(ui.app, ui.root, ui.home)
    files = params.getlist("file")
    done = signed_done(request) == "written"
    return page(
        request,
        "rules_sync.html",
        section="Rules",
        places=places,
        written=rules.paths_of(places, files) if done else None,
        whole=params.get("whole", ""),
        chosen=None,
        error=None,
    )


def sync_write(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Write the ticked files, each only if its planned text is still the one previewed; then
    back to the preview (303), so that reloading it writes nothing again."""
    # A ticked file's box sends the digest of the text its preview planned.
    chosen = {
        key.removeprefix("write:"): value for key, value in form.items() if key.startswith("write:")
    }
    written = rules.write_files(ui.app, ui.root, ui.home, chosen)
    if written is None:
        places = rules.plan_places(ui.app, ui.root, ui.home)
        return page(
            request,
            "rules_sync.html",
            409,
            section="Rules",
            places=places,
            written=None,
            whole="",
            chosen=set(chosen),
            error=STALE_PREVIEW,
        )
    files = [("file", key) for key in written]
    return done_redirect(request, "/rules/sync", [("done", "written"), *files])


# The query parameters a page reads as a list, given once per value (the files Write to tools
# wrote); any other given twice is refused (``app._address_problem``).
LIST_PARAMETERS = {"/rules/sync": frozenset({"file"})}

PAGES: tuple[tuple[str, Handler, bool], ...] = (
    ("/facts", facts_page, False),
    ("/facts/{fact_id}/{action}", fact_action, True),
    ("/rules", rules_page, False),
    ("/rules/add", rule_add, True),
    ("/rules/sync", sync_preview, False),
    ("/rules/sync", sync_write, True),
    ("/rules/{rule_id}/{action}", rule_action, True),
)
