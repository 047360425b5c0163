"""Finding memories: ranked search, file lookups and timelines."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Generic, TypeVar

from aletheia_mem.domain import hybrid
from aletheia_mem.domain.formatting import escape_quotes, one_line
from aletheia_mem.search.query import (
    MAX_PREFIX_TOKENS,
    hash_prefixes,
    query_start,
    query_terms,
    with_prefix_tokens,
    with_spellings,
    without_word_parts,
)
from aletheia_mem.storage.base import Fact, Memory, MemoryHead, MemoryQuery, Order

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from pathlib import Path

    from aletheia_mem.domain.file_paths import RepositoryRoot
    from aletheia_mem.search.semantic.model import SemanticSource
    from aletheia_mem.storage.contracts import Store

MAX_FACT_HITS = 5
_WRITTEN_WORD = re.compile(r"[0-9a-z]+")  # of a lower-cased query: a hash is one such run
QUOTED_CHARS = 200  # of a query or path quoted in a reason line


TOOL_FILTER_NAMES = ("type", "kind", "since", "until or older_than_days")


@dataclass(frozen=True)
class SearchRequest:
    """A search as the caller asked for it. ``projects`` None means every project;
    ``repository`` is the one a local server works in (a hub knows none)."""

    query: str | None
    projects: tuple[str, ...] | None
    file: str | None = None
    file_suffix: bool = False
    type: str | None = None
    kind: str | None = None
    since: int | None = None
    until: int | None = None
    order: Order = "relevance"
    limit: int = 20
    offset: int = 0  # a file search's too, where its caller applies one (the tool does not)
    repository: RepositoryRoot | Path | None = None  # a folder: the repository holding it
    # Only memories with ids up to this (``MemoryQuery.upto``): the web UI's later pages of
    # results leave out the memories saved since their first, so that none pushes a memory
    # onto the next page a second time (ranked at the first page's time too, they keep its order).
    upto: int | None = None
    # The search tool's index counts its fact lines in ``limit`` and ``offset`` (one line per
    # hit, facts first); the JSON API and the CLI page the memories and list the facts apart.
    facts_in_page: bool = False
    # How the caller names the type, kind, since and until filters in an empty page's reason:
    # the search tool's arguments, or the CLI's options.
    filter_names: tuple[str, str, str, str] = TOOL_FILTER_NAMES


M = TypeVar("M", Memory, Memory | MemoryHead)


@dataclass(frozen=True)
class SearchResult(Generic[M]):
    """One page of a search: the memories, the facts that match, and why it is empty if so."""

    facts: list[Fact]
    memories: Sequence[M]
    empty_reason: str | None
    memory_offset: int = 0  # the memories ranked before this page's first one


def search(
    store: Store,
    request: SearchRequest,
    now: int,
    semantic: SemanticSource | None = None,
) -> SearchResult[Memory]:
    """Facts that match (first page only, or counted in the page: ``facts_in_page``), then
    one page of memories.

    With ``semantic`` (the optional extra, once its model is loaded) the memories are ranked by
    BM25 fused with semantic similarity; otherwise by BM25 alone.
    """
    return _search(store, request, now, semantic, hybrid.search_memories)


def search_index(
    store: Store,
    request: SearchRequest,
    now: int,
    semantic: SemanticSource | None = None,
) -> SearchResult[Memory | MemoryHead]:
    """``search`` for an index of lines: a page BM25 ranks alone comes as heads, without text."""
    return _search(store, request, now, semantic, hybrid.search_heads)


def _search(
    store: Store,
    request: SearchRequest,
    now: int,
    semantic: SemanticSource | None,
    page: Callable[[Store, MemoryQuery, str, SemanticSource | None, int], Sequence[M]],
) -> SearchResult[M]:
    # Its counts, ranking, rows and facts in one read transaction: one state of the store, and
    # on SQLite the file's read locks taken once rather than by each of half a dozen statements.
    with store.snapshot():
        return _search_in(store, request, now, semantic, page)


def _search_in(
    store: Store,
    request: SearchRequest,
    now: int,
    semantic: SemanticSource | None,
    page: Callable[[Store, MemoryQuery, str, SemanticSource | None, int], Sequence[M]],
) -> SearchResult[M]:
    if request.file is not None:
        return _file_search(store, request, request.file, now, semantic, page)
    terms = search_terms(store, request.query or "")
    if not terms:
        return SearchResult(
            [], [], f"The query {_quoted(request.query)} has no words to search for."
        )
    matching: list[Fact] = []
    fact_terms = without_word_parts(request.query or "", terms)
    wanted = request.facts_in_page or request.offset == 0
    if wanted and request.type is None and request.kind is None and fact_terms:
        matching = [
            fact
            for fact in store.search_facts(fact_terms, request.projects, MAX_FACT_HITS, now)
            if _within(fact.valid_from, request.since, request.until)
        ]
    if request.facts_in_page:  # one index of lines: the facts, then the memories
        facts = matching[request.offset : request.offset + request.limit]
        offset, limit = max(request.offset - len(matching), 0), request.limit - len(facts)
    else:
        facts, offset, limit = matching, request.offset, request.limit
    query = MemoryQuery(
        terms=terms,
        projects=request.projects,
        type=request.type,
        kind=request.kind,
        since=request.since,
        until=request.until,
        order=request.order,
        limit=max(limit, 1),
        offset=offset,
        upto=request.upto,
    )
    memories = page(store, query, query_start(request.query or ""), semantic, now) if limit else []
    found = bool(memories or facts)
    reason = None if found else _empty_reason(store, request, query, now, bool(matching))
    return SearchResult(facts, memories, reason, offset)


def _file_search(
    store: Store,
    request: SearchRequest,
    file: str,
    now: int,
    semantic: SemanticSource | None,
    page: Callable[[Store, MemoryQuery, str, SemanticSource | None, int], Sequence[M]],
) -> SearchResult[M]:
    """The memories that name ``file`` however its path was spelled (``path_spellings``) and,
    for a whole path, absolute or relative to the repository's top (``path_forms``), newest
    first, from ``request.offset`` (each spelling's first ``offset + limit`` are read)."""
    from aletheia_mem.domain import file_paths  # file search only: off the start path

    repository = None if request.file_suffix else file_paths.resolved(request.repository)
    found: dict[int, M] = {}
    for form in file_paths.path_forms(file, repository, request.projects):
        for path in path_spellings(form.path, suffix=request.file_suffix):
            query = MemoryQuery(
                projects=form.projects,
                file=path,
                file_suffix=request.file_suffix,
                limit=request.offset + request.limit,
                upto=request.upto,
            )
            found.update((memory.id, memory) for memory in page(store, query, "", semantic, now))
    newest = sorted(found.values(), key=lambda memory: (memory.created_at, memory.id))
    memories = newest[::-1][request.offset : request.offset + request.limit]
    return SearchResult([], memories, None if memories else _file_reason(request))


def search_terms(store: Store, text: str) -> tuple[str, ...]:
    """The terms of ``text`` (``query_terms``) and the other spellings of its words
    (``with_spellings``: ``time zone`` finds ``timezone``), with the indexed tokens each hash
    prefix starts: a short commit SHA finds the memory that saved the full one.

    Hash prefixes come from the query's words as written (runs of letters and digits), never
    from a joined form: ``ABC-1234`` joined is ``abc1234``, which would find ``ABC-12345``."""
    terms = with_spellings(text, query_terms(text))
    written = set(_WRITTEN_WORD.findall(query_start(text).lower()))
    found = {
        prefix: store.tokens_with_prefix(prefix, MAX_PREFIX_TOKENS)
        for prefix in hash_prefixes(terms)
        if prefix in written
    }
    return tuple(with_prefix_tokens(terms, found))


def path_spellings(path: str, *, suffix: bool = False) -> list[str]:
    """The ways a file's path may have been saved: as given, with ``/`` or ``\\`` between its
    folders (one saved on Windows, one on Linux), and, for a whole path, with and without a
    leading ``./`` (``./src/app.py`` is ``src/app.py``)."""
    relative = path[2:] if not suffix and path[:2] in ("./", ".\\") and len(path) > 2 else path
    spellings = dict.fromkeys([path])
    for separator, other in (("/", "\\"), ("\\", "/")):
        written = relative.replace(other, separator)
        spellings.setdefault(written, None)
        if not suffix and not written.startswith(separator):
            spellings.setdefault("." + separator + written, None)
    return list(spellings)


def _within(at: int, since: int | None, until: int | None) -> bool:
    return (since is None or at >= since) and (until is None or at < until)


# One character of a quoted text as shown: an escape (``\\``, ``\"``, a control's ``\x1b``,
# ``\u202e`` or ``\U000e0041``) or a character.
_SHOWN_CHAR = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)|.", re.DOTALL)


def _quoted(text: str | None) -> str:
    """``text`` in quotes for a reason line, on one line, neutralized and redacted (the
    caller's text, outside the recall block), its start only when it is long. A backslash or
    double quote in it is escaped as in JSON (``\\``, ``\"``), so it is shown as typed and a
    quote in it cannot end the quoted text; a cut keeps each escape whole."""
    from aletheia_mem.domain.redaction import redact_secrets  # only when a reason quotes it

    shown = one_line(escape_quotes(redact_secrets(text or "")))
    if len(shown) > QUOTED_CHARS:
        kept = ""
        for char in _SHOWN_CHAR.finditer(shown):
            if len(kept) + len(char.group()) > QUOTED_CHARS:
                break
            kept += char.group()
        shown = kept + "…"
    return '"' + shown + '"'


def _scope(projects: tuple[str, ...] | None) -> str:
    if projects is None:
        return "any project"
    return "project " + ", ".join(f'"{one_line(name)}"' for name in projects)


def _file_reason(request: SearchRequest) -> str:
    how = "ends with" if request.file_suffix else "is"
    return (
        f"No memory in {_scope(request.projects)} names a file that {how} {_quoted(request.file)}."
    )


def _empty_reason(
    store: Store, request: SearchRequest, query: MemoryQuery, now: int, facts_matched: bool
) -> str:
    """Why a page is empty; ``facts_matched``: the search matched facts (on an earlier page)."""
    if request.offset > 0 and facts_matched:
        return f"Nothing past offset {request.offset}."
    if not store.has_memories(request.projects):
        if store.has_memories(request.projects, dismissed=True):
            where = "" if request.projects is None else f" in {_scope(request.projects)}"
            return f"Every memory{where} is dismissed."
        if request.projects is None:
            return "There are no memories yet."
        return f"{_scope(request.projects).capitalize()} has no memories yet."
    if request.offset > 0:
        unpaged = replace(query, offset=0, limit=1)
        if store.search_memories(unpaged, now):
            return f"Nothing past offset {request.offset}."
    if request.since is not None and request.until is not None and request.since > request.until:
        since_name, until_name = request.filter_names[2:]
        return f"{since_name} is later than {until_name}: no memory can match both."
    values = (request.type, request.kind, request.since, request.until)
    filters = [
        name for name, value in zip(request.filter_names, values, strict=True) if value is not None
    ]
    if filters:
        unfiltered = replace(query, type=None, kind=None, since=None, until=None, offset=0, limit=1)
        if store.search_memories(unfiltered, now):
            return f"The filters ({', '.join(filters)}) excluded every memory that matched."
    return f"Nothing in {_scope(request.projects)} matches {_quoted(request.query)}."


@dataclass(frozen=True)
class Timeline:
    """A memory with its neighbours in time, before and after it."""

    before: list[Memory]
    anchor: Memory
    after: list[Memory]


def find_anchor(
    store: Store,
    anchor_id: int | None,
    query: str | None,
    projects: tuple[str, ...] | None,
    now: int,
) -> Memory | None:
    """The memory a timeline centres on: by id, else the best search hit."""
    if anchor_id is not None:
        memory = store.get_memory(anchor_id)
        if memory is None or memory.dismissed_at is not None:
            return None
        if projects is not None and memory.project not in projects:
            return None
        return memory
    terms = search_terms(store, query or "")
    if not terms:
        return None
    hits = store.search_memories(MemoryQuery(terms=terms, projects=projects, limit=1), now)
    return hits[0] if hits else None


def timeline(
    store: Store,
    anchor: Memory,
    neighbour_projects: tuple[str, ...] | None,
    before: int,
    after: int,
) -> Timeline:
    """The anchor with its neighbours in time (from ``neighbour_projects``, None: any), oldest
    first."""
    earlier = store.neighbours(anchor, neighbour_projects, before, later=False) if before else []
    later = store.neighbours(anchor, neighbour_projects, after, later=True) if after else []
    return Timeline(list(reversed(earlier)), anchor, later)
