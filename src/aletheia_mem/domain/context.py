"""The session-start block: what an agent should know about a project before it starts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aletheia_mem.domain.formatting import (
    TYPE_MARKS,
    applied_rule_text,
    cut_at_word,
    fact_line,
    one_line,
)
from aletheia_mem.domain.kinds import OBSERVATION_KIND
from aletheia_mem.domain.rules import one_per_line, rules_for_project
from aletheia_mem.domain.worklists import WORK_STATE_KIND, quoted_name
from aletheia_mem.storage.base import Fact, Memory
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.entries import Rule, SessionRequest
from aletheia_mem.timefmt import format_clock, format_date

CHARACTER_BUDGET = 6000
# Every pinned memory is listed while the block has room: more than its shortest lines
# ("- #1 19:46 [N] x") fill, so that the budget, not this, leaves pinned ones out (counted as cut).
MAX_PINNED = CHARACTER_BUDGET // len("- #1 19:46 [N] x\n") + 1
MAX_FACTS = 10
MAX_LISTS_NAMED = 10  # a block without memories names this many of the project's lists
LIST_NAMES_BUDGET = 400  # characters of their names, within the block's budget
MAX_REQUESTS = 10
MAX_REQUEST_LENGTH = 200  # characters of a request's line, then cut at a word and marked
_MEMORY, _FACT, _RULE = ("memory", "memories"), ("fact", "facts"), ("rule", "rules")


@dataclass
class _Section:
    heading: str
    lines: list[tuple[str, bool]]  # (line, counts as an item)
    priority: int  # 0 is kept first and cut last (see _fit)
    noun: tuple[str, str]  # what one item is, and more than one, as the cut is told
    kept: int = 0
    beyond: int = 0  # items past the lines read, which the budget would have cut as well

    def shown(self) -> int:
        """How many items the kept lines show (the first ones of the section's list)."""
        return sum(1 for _, counts in self.lines[: self.kept] if counts)

    def cut(self) -> int:
        """How many of its items were left out to keep the block within the budget."""
        return sum(1 for _, counts in self.lines if counts) + self.beyond - self.shown()


@dataclass(frozen=True)
class ContextParts:
    """What the session-start block lists, item by item, and how many items it cut."""

    project: str
    pinned: list[Memory]
    recent: list[Memory]
    requests: list[SessionRequest]
    facts: list[Fact]
    rules: list[Rule]
    cut: int
    facts_left_out: int  # current facts past the first MAX_FACTS: not listed, and not cut


def _memory_line(memory: Memory) -> str:
    mark = TYPE_MARKS.get(memory.type, "N")
    return f"- #{memory.id} {format_clock(memory.created_at)} [{mark}] {one_line(memory.title)}"


def _recent_lines(memories: list[Memory]) -> list[tuple[str, bool]]:
    lines: list[tuple[str, bool]] = []
    day = None
    for memory in memories:
        if format_date(memory.created_at) != day:
            day = format_date(memory.created_at)
            lines.append((f"### {day}", False))
        lines.append((_memory_line(memory), True))
    return lines


def build_context(store: Store, project: str, limit: int, *, now: int, wrapped: bool = True) -> str:
    """Markdown for ``project``, cut to about 6000 characters without cutting a line; its
    facts are the ones valid ``now``. Its token estimate counts the recall wrapper unless
    ``wrapped`` is False (a block printed without it)."""
    return build_context_parts(store, project, limit, now=now, wrapped=wrapped)[0]


def build_context_parts(
    store: Store, project: str, limit: int, *, now: int, wrapped: bool = True
) -> tuple[str, ContextParts]:
    """``build_context`` and the items its block lists."""
    skip = (WORK_STATE_KIND, OBSERVATION_KIND)  # a list is read whole; a session's summary
    # names the files its observations changed. Pinned, any kind is listed: someone chose it.
    pinned = store.recent_memories(project, MAX_PINNED, pinned=True, exclude_kinds=())
    recent = store.recent_memories(project, limit, pinned=False, exclude_kinds=skip)
    if not recent:  # only observations (a session not ended yet): they are the recent ones
        recent = store.recent_memories(
            project, limit, pinned=False, exclude_kinds=(WORK_STATE_KIND,)
        )
    requests = store.recent_requests(project, MAX_REQUESTS)
    facts = store.current_facts(project, MAX_FACTS, now)
    facts_left_out = _past(len(facts), MAX_FACTS, lambda: store.count_current_facts(project, now))
    # A line shown once: the same words apply whichever rule (and scope) gives them.
    rules = one_per_line(rules_for_project(store.list_rules(), project), applied_rule_text)
    # Kept first, cut last: the rules the owner set and the memories someone pinned; then the
    # current facts; then the requests (no tool lists the ones cut); the recent memories last,
    # the oldest first (search finds them, and the block's newest ones say what came last).
    sections = [
        _Section(
            "## Pinned",
            [(_memory_line(m), True) for m in pinned],
            1,
            _MEMORY,
            beyond=_past(len(pinned), MAX_PINNED, lambda: store.count_pinned_memories(project)),
        ),
        _Section("## Recent", _recent_lines(recent), 4, _MEMORY),
        _Section(
            "## Requests",
            [
                (
                    f"- {format_date(r.at)} {format_clock(r.at)} ({one_line(r.tool)})"
                    f" {cut_at_word(one_line(r.text), MAX_REQUEST_LENGTH)}",
                    True,
                )
                for r in requests
            ],
            3,
            ("request", "requests"),
        ),
        _Section("## Facts", [("- " + fact_line(f, now), True) for f in facts], 2, _FACT),
        _Section("## Rules", [(f"- {applied_rule_text(r)}", True) for r in rules], 0, _RULE),
    ]
    header = f"# Memory for {one_line(project)}"
    used = _fit(sections, len(header) + 1)
    cut = sum(section.cut() for section in sections)
    shown = [section.shown() for section in sections]
    parts = ContextParts(
        project,
        pinned[: shown[0]],
        recent[: shown[1]],
        requests[: shown[2]],
        facts[: shown[3]],
        rules[: shown[4]],
        cut,
        facts_left_out,
    )
    room = min(LIST_NAMES_BUDGET, CHARACTER_BUDGET - used - len(_lists_line([])))
    lists = [] if pinned or recent else _list_names(store, project, room)
    outcome = _outcome(sections, cut, facts_left_out)
    return (
        _render(header, sections, outcome, lists, lambda: _empty(store, project), wrapped),
        parts,
    )


def _fit(sections: list[_Section], used: int) -> int:
    """Keep each section's first lines within the budget (``used`` characters are taken) and
    return the characters then used. First every section's first item, most important section
    first, so that none is left out for another's older lines; then the rest of each, in the
    same order, as far as it fits: the oldest recent memories go first, the rules last."""
    ranked = sorted(sections, key=lambda s: s.priority)
    for section in ranked:
        first = next((i + 1 for i, (_, counts) in enumerate(section.lines) if counts), 0)
        cost = sum(_line_cost(section, index) for index in range(first))
        if used + cost <= CHARACTER_BUDGET:
            used += cost
            section.kept = first
    for section in ranked:
        if not section.kept:  # its first item did not fit: no later one is listed without it
            continue
        while section.kept < len(section.lines):
            cost = _line_cost(section, section.kept)
            if used + cost > CHARACTER_BUDGET:
                break
            used += cost
            section.kept += 1
    return used


def _line_cost(section: _Section, index: int) -> int:
    """The characters a section's line takes, with its newline (and the heading, for its first)."""
    return len(section.lines[index][0]) + 1 + (len(section.heading) + 1 if index == 0 else 0)


def _empty(store: Store, project: str) -> str:
    """What a block that lists nothing says: why, as search's empty answer does."""
    if store.has_memories((project,)):  # lists only, whose names did not fit
        return "No memories to list for this project; work_state_read reads its lists."
    if store.has_memories((project,), dismissed=True):
        return f'Every memory in project "{one_line(project)}" is dismissed.'
    return "Nothing saved for this project yet. Use save_memory to keep what matters."


def _past(read: int, cap: int, count: Callable[[], int]) -> int:
    """How many items a section's list leaves out past its ``cap`` (``read`` of them were
    read): counted only when the list is full."""
    return max(count() - cap, 0) if read >= cap else 0


def _lists_line(names: list[str]) -> str:
    return (
        f"No memories to list for this project yet; its work-state lists: {', '.join(names)}"
        " (work_state_read reads one)."
    )


def _list_names(store: Store, project: str, room: int) -> list[str]:
    """The project's work-state lists, newest first, named as work_state_read takes them: a
    block that lists no memory says they exist (instead of "Nothing saved" when it lists
    nothing at all)."""
    found = store.recent_memories(
        project, MAX_LISTS_NAMED, pinned=False, exclude_kinds=(OBSERVATION_KIND,)
    )
    names: list[str] = []
    for memory in found:
        name = quoted_name(memory.title.removesuffix(" list"))
        if memory.kind == WORK_STATE_KIND and len(name) <= room:
            names.append(name)
            room -= len(name) + 2  # and its ", "
    return names


def _outcome(sections: list[_Section], cut: int, facts_left_out: int) -> str:
    """The end of the economics line: what the budget cut, the current facts past the first
    ``MAX_FACTS`` (the section lists no more), then once which tool finds them (search the
    memories and facts, list_rules the rules; the requests of sessions no tool lists), or
    ``nothing cut``."""
    counts: dict[tuple[str, str], int] = {}
    for section in sections:
        counts[section.noun] = counts.get(section.noun, 0) + section.cut()
    gone = {noun: count for noun, count in counts.items() if count}
    told = []
    if cut:
        told.append(
            f"{cut} item{'s' if cut != 1 else ''} cut to stay near {CHARACTER_BUDGET} characters"
        )
        if not set(gone) <= {_MEMORY, _FACT}:
            told[0] += " (" + ", ".join(f"{n} {noun[n != 1]}" for noun, n in gone.items()) + ")"
    if facts_left_out:
        noun = _FACT[facts_left_out != 1]
        told.append(f"{facts_left_out} current {noun} left out past the first {MAX_FACTS}")
        gone[_FACT] = gone.get(_FACT, 0) + facts_left_out
    if not told:
        return "nothing cut"
    if set(gone) <= {_MEMORY, _FACT}:
        told.append("search finds " + ("it" if sum(gone.values()) == 1 else "them"))
        return "; ".join(told)
    found = " and ".join(noun[1] for noun in (_MEMORY, _FACT) if noun in gone)
    if found:
        told.append(f"search finds the {found}")
    if _RULE in gone:
        told.append("list_rules lists the rules")
    return "; ".join(told)


def _render(
    header: str,
    sections: list[_Section],
    outcome: str,
    lists: list[str],
    empty: Callable[[], str],
    wrapped: bool,
) -> str:
    out = [header]
    items = 0
    for section in sections:
        kept = section.lines[: section.kept]
        while kept and not kept[-1][1]:  # a day heading left without its items
            kept.pop()
        if not kept:
            continue
        out.append(section.heading)
        out.extend(line for line, _ in kept)
        items += sum(1 for _, counts in kept if counts)
    if lists:
        out.append(_lists_line(lists))
    elif items == 0:
        out.append(empty())
    body = "\n".join(out)

    def economics(tokens: int) -> str:
        return (
            f"Context economics: {items} item{'' if items == 1 else 's'} listed;"
            f" ~{tokens} tokens for this block (estimate, chars/4); {outcome}."
        )

    if wrapped:
        tokens = (len(body) + 300) // 4  # with the recall wrapper and this line
    else:  # what is printed: the body and this line (its own number's digits included)
        tokens = (len(body) + 1 + len(economics(len(body) // 4))) // 4
    return f"{body}\n{economics(tokens)}"
