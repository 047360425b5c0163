"""The Lists and Context pages."""

from __future__ import annotations

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.domain.worklists import items_version
from aletheia_mem.errors import ConflictError, InvalidInputError, NotFoundError, StaleListError
from aletheia_mem.web import context, lists
from aletheia_mem.web.base import Handler, Ui, done_redirect, signed_done, submitted
from aletheia_mem.web.project_choice import project_choice
from aletheia_mem.web.render import page
from aletheia_mem.web.visible import visible

LIST_NOTICES = {"saved": "List saved.", "renamed": "List renamed."}
# A save from an Edit form whose list was written meanwhile (an agent's work_state_write).
STALE_LIST = (
    "The list changed since you opened it (an agent or another page wrote it), so nothing was"
    " saved. Your text is kept below, and the list's items now are shown under it: merge what"
    " you need, then Save list again to replace the list with your text."
)
# A refused save's status: the list to rename is gone, or the new name taken meanwhile.
_REFUSED = ((NotFoundError, 404), (ConflictError, 409), (InvalidInputError, 400))


def _project(request: Request, form: dict[str, str]) -> str:
    return (form.get("project") or request.query_params.get("project", "")).strip()


def _lists_view(
    ui: Ui,
    request: Request,
    project: str,
    name: str,
    status: int = 200,
    typed: tuple[str, str] | None = None,
    error: str | None = None,
    existing: str | None = None,
    dismissed_id: int | None = None,
    stale: bool = False,
) -> Response:
    """The Lists page with list ``name`` open (none: the New list form); ``typed`` (name,
    items) keeps what a refused form held, ``error`` says why and ``existing`` names the list
    in the way (``dismissed_id``: the memory of the dismissed list in the way); ``stale``: the
    list changed under the form, whose page then shows its items now beside the typed ones."""
    found = lists.index(ui.app, project)
    # A dismissed list's name (Back after a rename, an old link): the page says where it went.
    gone = lists.dismissed(ui.app, found["project"], name) if name else None
    current = lists.read(ui.app, found["project"], name) if name and gone is None else None
    lines = "\n".join(lists.item_line(item) for item in current["items"]) if current else ""
    return page(
        request,
        "lists.html",
        status,
        section="Lists",
        project=found["project"],
        lists=found["lists"],
        current=current,
        name_value=typed[0] if typed else (current["name"] if current else ""),
        lines=typed[1] if typed else lines,
        based_on=items_version(current["items"]) if current else "",
        theirs=lines if stale and current else None,
        error=error,
        existing=existing,
        dismissed_id=dismissed_id,
        projects=project_choice(request, ui.app.store.project_names),
        notice=_notice(ui, request, found["project"], name if gone else ""),
    )


def _notice(ui: Ui, request: Request, project: str, dismissed: str) -> str | Markup | None:
    """What this browser's own save or rename did (a rename: where the old list went), or that
    the list asked for (``dismissed``) is dismissed."""
    done = signed_done(request)
    old = request.query_params.get("from", "") if done == "renamed" else ""
    for name in (old, dismissed):
        gone = lists.dismissed(ui.app, project, name) if name else None
        if gone is not None:
            where = Markup('The list “{}” is dismissed; <a href="/memories/{}">its page</a>')
            told = where.format(visible(name.strip()), gone.id) + " restores it."
            return Markup(" ").join([LIST_NOTICES[done], told]) if name == old else told
    return LIST_NOTICES.get(done)


def lists_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    name = request.query_params.get("name", "").strip()
    return _lists_view(ui, request, _project(request, form), name)


def list_save(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Save the form's list. A name other than the list being edited (the New list form edits
    none) must be free: the form never replaces another list unseen, and an edited list given
    a new name is renamed (nothing is left under the old one). A refused form comes back as it
    was sent, with the reason."""
    name, items = submitted(form, "name"), form.get("items", "")
    project = lists.index(ui.app, _project(request, form))["project"]
    editing = form.get("editing", "").strip()
    back = editing if editing and lists.exists(ui.app, project, editing) else ""
    typed = (name, items)
    if name.strip() != editing and name.strip() and lists.exists(ui.app, project, name.strip()):
        error = f"A list named “{name.strip()}” exists: open it to edit it."
        return _lists_view(ui, request, project, back, 409, typed, error, name.strip())
    based_on = form.get("based_on") if back else None  # checked in the write's transaction
    renaming = bool(back) and name.strip() != back
    other = bool(name.strip()) and name.strip() != back
    gone = lists.in_the_way(ui.app, project, name, back) if other else None
    if gone is not None:  # saving would bring it back with these items, its own lost
        error = f"A dismissed list named “{name.strip()}” exists: restore it to edit it."
        return _lists_view(ui, request, project, back, 409, typed, error, None, gone.id)
    try:
        if renaming:
            saved = lists.rename(ui.app, project, back, name, items, based_on)
        else:
            saved = lists.write(ui.app, project, name, items, based_on)
    except StaleListError:
        return _lists_view(ui, request, project, back, 409, typed, STALE_LIST, stale=True)
    except (NotFoundError, ConflictError, InvalidInputError) as refused:
        status = next(code for kind, code in _REFUSED if isinstance(refused, kind))
        shown = "" if status == 404 else back  # the list to rename is gone: a New list form
        return _lists_view(ui, request, project, shown, status, typed, refused.message)
    done = "renamed" if renaming else "saved"
    fields = [("project", saved["project"]), ("name", saved["name"]), ("done", done)]
    if renaming:  # the page says where the old list went
        fields.append(("from", back))
    return done_redirect(request, "/lists", fields)


def context_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    found = context.session_context(ui.app, _project(request, form))
    return page(
        request,
        "context.html",
        section="Context",
        projects=project_choice(request, ui.app.store.project_names),
        **found,
    )


PAGES: tuple[tuple[str, Handler, bool], ...] = (
    ("/lists", lists_page, False),
    ("/lists/save", list_save, True),
    ("/context", context_page, False),
)
