"""Pages from the package's Jinja2 templates, every value escaped, sent with the UI's headers."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from aletheia_mem.web.security import CSRF_FIELD, SECURITY_HEADERS, csrf_token, remember_csrf
from aletheia_mem.web.visible import visible

NAV = ("Memories", "Facts", "Rules", "Lists", "Context")
HUB_NAV = ("Tokens", "Audit")


def _when(value: str | None) -> str:
    """``2026-10-29T19:46:45.563Z`` as ``2026-10-29 19:46`` (UTC)."""
    return "" if not value else value[:16].replace("T", " ")


class Exact(str):
    """A stored value a form sends back as it is (an ``<option>``'s or a hidden input's value,
    never shown): ``finalize`` leaves it alone, autoescape still escapes it."""

    __slots__ = ()


def _exact(value: object) -> Exact:
    return Exact(value)


def _finalize(value: object) -> object:
    """Every ``{{ }}`` a template prints: plain text shown with its escapes (``visible``), so
    no template can forget to; Markup (already built from shown parts) and ``Exact`` as they
    are."""
    if isinstance(value, str) and not isinstance(value, Markup | Exact):
        return visible(value)
    return value


_MEMORY_ID = re.compile(r"#([0-9]{1,15})\b")  # "#\uff11" in a text links to no memory


def _memory_links(value: object) -> Markup:
    """Stored text (escaped, control characters visible) with each ``#N`` a link to memory N: a
    resumed session's old summary says ``the session went on: #12 sums it up``."""
    text, shown, start = visible(value), [], 0
    for found in _MEMORY_ID.finditer(text):
        shown += [escape(text[start : found.start()]), _memory_link(int(found.group(1)))]
        start = found.end()
    return Markup("").join([*shown, escape(text[start:])])


def _memory_link(memory_id: int) -> Markup:
    return Markup('<a href="/memories/{0}">#{0}</a>').format(memory_id)


STATIC = resources.files("aletheia_mem.web") / "static"


@cache
def asset_url(name: str) -> str:
    """``/static/ui.js?v=<hash>``: a new version of a file is a new URL, so it may be cached."""
    digest = hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]
    return f"/static/{name}?v={digest}"


def _stamp_of_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


def _date_of_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


ENV = Environment(
    loader=PackageLoader("aletheia_mem.web", "templates"),
    autoescape=True,  # every value is HTML-escaped, whatever the template's name
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=_finalize,
)
ENV.filters["when"] = _when
ENV.filters["day"] = _date_of_ms
ENV.filters["visible"] = visible
ENV.filters["exact"] = _exact
ENV.filters["memory_links"] = _memory_links
ENV.globals["asset"] = asset_url
ENV.filters["stamp"] = _stamp_of_ms


def secure(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    response.headers.setdefault("cache-control", "no-store")
    return response


def page(request: Request, template: str, status: int = 200, **values: Any) -> Response:
    """A rendered template with the CSRF token, the navigation and the security headers."""
    section = values.pop("section", "")
    hub = bool(request.scope.get("aletheia_hub"))
    html = ENV.get_template(template).render(
        csrf=csrf_token(request),
        csrf_field=CSRF_FIELD,
        nav=HUB_NAV if hub else NAV,
        section=section,
        notice=values.pop("notice", None),
        signed_in=bool(request.scope.get("aletheia_signed_in")),
        **values,
    )
    response = HTMLResponse(html, status)
    remember_csrf(request, response)
    return secure(response)


def fragment(request: Request, template: str, **values: Any) -> Response:
    """Part of a page (rows the script inserts), escaped like a whole page."""
    html = ENV.get_template(template).render(
        csrf=csrf_token(request), csrf_field=CSRF_FIELD, **values
    )
    return secure(HTMLResponse(html))
