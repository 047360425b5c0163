"""Episodes captured by hooks: one working session of one tool in one project.

A host's session id names the episode (its uid is derived from it), so every hook call of one
session finds the same episode without any state outside the store.
"""

from __future__ import annotations

import hashlib
import re

from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.storage.contracts import WorkStore
from aletheia_mem.timefmt import format_date

MAX_REQUEST_LENGTH = 4000
# Opening and closing <private> tags, in any case and with attributes or blanks.
_PRIVATE_TAG = re.compile(r"<(?P<close>/)?private\b[^>]*>", re.IGNORECASE)


def strip_private(text: str) -> str:
    """``text`` without anything inside ``<private>...</private>`` (tags included).

    Tags nest: ``<private>a <private>b</private> c</private>`` removes ``c`` as well. An
    unclosed block runs to the end; a closing tag without an opening one is dropped alone.
    """
    kept: list[str] = []
    depth = done = 0
    for tag in _PRIVATE_TAG.finditer(text):
        if depth == 0:
            kept.append(text[done : tag.start()])
        if tag["close"] is None:
            depth += 1
        elif depth > 0:
            depth -= 1
        done = tag.end()
    if depth == 0:
        kept.append(text[done:])
    return "".join(kept)


def clean_request(text: str) -> str:
    """What may be stored of a prompt: private parts removed, secrets redacted, trimmed, and
    no NUL or lone surrogate (what a store could not export and import again)."""
    storable = text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
    return redact_secrets(strip_private(storable)).strip()[:MAX_REQUEST_LENGTH]


def read_head(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` to clean, without the part the cut falls in.

    What runs past the cut is not there to redact: a token cut in two is too short for its
    pattern, a quoted value cut short has no closing quote, and a private block before it may
    leave that part first in line to be kept. So a cut text loses its last, partial line (or,
    on a single line, its last partial word).
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    lines = head.rsplit("\n", 1)
    if len(lines) == 2:
        return lines[0]
    words = head.rsplit(None, 1)
    return words[0] if len(words) == 2 else ""


def episode_uid(tool: str, project: str, session_id: str | None, now: int) -> str:
    """A stable uid for the host's session (one per day and project without a session id)."""
    key = session_id or f"{project}\x00{format_date(now)}"
    return hashlib.sha256(f"episode\x00{tool}\x00{key}".encode()).hexdigest()[:32]


def start_episode(
    store: WorkStore, *, project: str, tool: str, session_id: str | None, now: int
) -> int:
    """Open (or reopen) the session's episode."""
    uid = episode_uid(tool, project, session_id, now)
    return store.open_episode(uid, project, tool, now)


def record_request(
    store: WorkStore,
    *,
    project: str,
    tool: str,
    session_id: str | None,
    prompt: str,
    now: int,
) -> bool:
    """Store one user prompt as a request of the session's episode; False if nothing is left."""
    text = clean_request(prompt)
    if not text:
        return False
    episode = start_episode(store, project=project, tool=tool, session_id=session_id, now=now)
    store.add_request(episode, text, now)
    return True


def end_episode(
    store: WorkStore, *, project: str, tool: str, session_id: str | None, now: int
) -> bool:
    """Close the session's episode; False when the session never started one."""
    episode = store.episode_id_by_uid(episode_uid(tool, project, session_id, now))
    if episode is None:
        return False
    return store.end_episode(episode, now, None)
