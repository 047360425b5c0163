"""The Lists and Context pages."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.web import context, lists
from aletheia_mem.web.base import Handler, Ui, redirect, submitted
from aletheia_mem.web.render import page


def _project(request: Request, form: dict[str, str]) -> str:
    return (form.get("project") or request.query_params.get("project", "")).strip()


def lists_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    project = _project(request, form)
    name = request.query_params.get("name", "").strip()
    found = lists.index(ui.app, project)
    current = lists.read(ui.app, found["project"], name) if name else None
    return page(
        request,
        "lists.html",
        section="Lists",
        project=found["project"],
        lists=found["lists"],
        current=current,
        lines="\n".join(lists.item_line(item) for item in current["items"]) if current else "",
        projects=ui.app.store.project_names(),
        notice="List saved." if request.query_params.get("done") == "saved" else None,
    )


def list_save(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    name, items = submitted(form, "name"), form.get("items", "")
    saved = lists.write(ui.app, _project(request, form), name, items)
    query = urlencode({"project": saved["project"], "name": saved["name"], "done": "saved"})
    return redirect(f"/lists?{query}")


def context_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    found = context.session_context(ui.app, _project(request, form))
    return page(
        request,
        "context.html",
        section="Context",
        projects=ui.app.store.project_names(),
        **found,
    )


PAGES: tuple[tuple[str, Handler, bool], ...] = (
    ("/lists", lists_page, False),
    ("/lists/save", list_save, True),
    ("/context", context_page, False),
)
