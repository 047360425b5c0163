"""Standing rules: add once, confirm, and flag the ones that need a re-check."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from aletheia_mem.blank import is_blank
from aletheia_mem.canonical import canonical, decomposed
from aletheia_mem.domain.formatting import joined_ids, one_line
from aletheia_mem.domain.limits import MAX_NAME, MAX_RULE, check_length, check_name_characters
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.errors import ForbiddenError, InvalidInputError, NotFoundError
from aletheia_mem.escapes import escaped
from aletheia_mem.printable import printable_line
from aletheia_mem.storage.base import DismissTable
from aletheia_mem.storage.entries import Rule
from aletheia_mem.timefmt import DAY_MS

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from aletheia_mem.storage.contracts import Store

RECHECK_AFTER_DAYS = 90
# The source of a rule the owner adds by hand (CLI, JSON API, web UI), as list_rules shows it;
# a rule added over MCP keeps the calling tool's name (so does `rules add` with ALETHEIA_TOOL).
OWNER_SOURCE = "you"
# What an add did: a new rule, an identical one that was disabled enabled again, or nothing.
RuleAdded = Literal["created", "enabled", "exists"]


@dataclass(frozen=True)
class RuleInput:
    then: str
    when: str
    scope_tier: str
    scope_name: str
    evidence_memory_ids: Sequence[int]
    evidence_fact_ids: Sequence[int]
    source: str


def rule_id(then: str, when: str, scope_tier: str, scope_name: str) -> str:
    """``r_`` + 10 hex digits, the same for the same rule on every machine."""
    digest = hashlib.sha256(f"{then}\x00{when}\x00{scope_tier}\x00{scope_name}".encode())
    return "r_" + digest.hexdigest()[:10]


def stored_scope_name(name: str, compose: bool = True) -> str:
    """A rule's scope name as a store keeps it, whoever wrote it (``add_rule``, an import, a
    synced peer): in NFC (``canonical``; as typed where not ``compose``, as a release before
    kept it), its blanks one space and its secrets redacted; a control or format character
    (which ``add_rule`` refuses, and an earlier release let in) dropped."""
    kept = canonical(name) if compose else name
    return redact_secrets(printable_line(kept, len(kept)) or "")


def rule_words(
    then: str, when: str, blank: Callable[[str], bool] = is_blank, compose: bool = True
) -> tuple[str, str]:
    """A rule's ``then`` and ``when`` as ``add_rule`` keeps them, before redaction, whichever
    door (or synced peer) gives them: in NFC (``canonical``: ``e`` and an accent is ``é``),
    one space between words; a ``blank`` situation, or "always" in any case, is "always" (the
    default situation: one rule, one id). A peer's or an export's record passes
    ``is_blank_as_before``: a zero-width rule an earlier release made is kept. Not ``compose``:
    the words as typed, as a release before kept them.

    Raises:
        InvalidInputError: ``then`` is blank.
    """
    if compose:
        then, when = canonical(then), canonical(when)
    then, when = " ".join(then.split()), " ".join(when.split())
    if blank(then):  # only blanks or format characters (a zero-width space) say nothing
        raise InvalidInputError("then is required.")
    return then, "always" if blank(when) or when.lower() == "always" else when


def rule_scope_name(
    tier: str,
    name: str,
    project: Callable[[str], str],
    fields: tuple[str, str] = ("scopeTier", "scopeName"),
    *,
    stray_name_dropped: bool = False,
) -> str:
    """The scope name ``add_rule`` keeps for a rule of ``tier``: none for one that applies
    everywhere; a situation's trimmed, which must not be blank; a project's as ``project``
    gives it (a door's project: its key, never "*"). ``fields`` names the tier and the name
    in a message. A name given to an everywhere rule is refused (it would be dropped), unless
    ``stray_name_dropped`` (a record from an import or a peer, kept as earlier releases kept it).

    Raises:
        InvalidInputError: a blank situation, a name for an everywhere rule (it would be
            dropped), or what ``project`` raises.
    """
    if tier == "everywhere":
        if not is_blank(name) and not stray_name_dropped:
            raise InvalidInputError(
                f"{fields[0]} project or situation is required when {fields[1]} is given."
            )
        return ""
    if tier == "project":
        return project(name.strip())
    if is_blank(name):
        raise InvalidInputError(f"{fields[1]} is required when {fields[0]} is situation.")
    return name.strip()


def _unknown_evidence(kind: str, ids: list[int]) -> str:
    """``Unknown evidence memory id #7.``, or every unknown id: ``... ids #7, #8 and #9.``"""
    return f"Unknown evidence {kind} id{'s' if len(ids) > 1 else ''} {joined_ids(ids)}."


def _visible_ids(
    store: Store, table: DismissTable, ids: Sequence[int], projects: tuple[str, ...] | None
) -> set[int]:
    """The ids that exist and, for a project-limited caller, belong to its projects: an id of
    another project is as unknown as one that does not exist."""
    found = store.existing_memory_ids(ids) if table == "memories" else store.existing_fact_ids(ids)
    if projects is None:
        return found
    return {id_ for id_ in found if store.project_of(table, id_) in projects}


def add_rule(
    store: Store, item: RuleInput, now: int, projects: tuple[str, ...] | None = None
) -> tuple[Rule, bool]:
    """``add_rule_telling``, with whether the rule is new."""
    rule, added = add_rule_telling(store, item, now, projects)
    return rule, added == "created"


def add_rule_telling(
    store: Store, item: RuleInput, now: int, projects: tuple[str, ...] | None = None
) -> tuple[Rule, RuleAdded]:
    """Store the rule unless the identical one is there; unknown evidence is refused.

    ``projects`` limits the evidence a caller may cite (None: every project). The limits on
    ``then`` and ``when`` are the stored rule's (DESIGN: "then (at most 800 chars)"): its text
    with whitespace collapsed, as every door gives it, and with secrets redacted.

    Returns the rule as stored after the add, and what the add did: ``created``; ``enabled``,
    an identical rule that was disabled, enabled again (and returned enabled); ``exists``.
    """
    then, when = rule_words(item.then, item.when)
    check_length("then", then, MAX_RULE)
    check_length("when", when, MAX_RULE)
    check_length("scopeName", item.scope_name, MAX_NAME)
    # As sync checks it (stores agree), once blanks are one space: a newline is a blank.
    check_name_characters("scopeName", " ".join(item.scope_name.split()))
    memory_ids = list(dict.fromkeys(item.evidence_memory_ids))
    fact_ids = list(dict.fromkeys(item.evidence_fact_ids))
    missing_memories = sorted(
        set(memory_ids) - _visible_ids(store, "memories", memory_ids, projects)
    )
    if missing_memories:
        raise InvalidInputError(_unknown_evidence("memory", missing_memories))
    missing_facts = sorted(set(fact_ids) - _visible_ids(store, "facts", fact_ids, projects))
    if missing_facts:
        raise InvalidInputError(_unknown_evidence("fact", missing_facts))
    then, when = redact_secrets(then), redact_secrets(when)
    for name, text in (("then", then), ("when", when)):  # a marker may outgrow what it hides
        if len(text) > MAX_RULE:
            raise InvalidInputError(
                f"{name} must be at most {MAX_RULE} characters once secrets are redacted."
            )
    scope_name = stored_scope_name(item.scope_name)
    rule = Rule(
        id=_id_given_before(store, item, rule_id(then, when, item.scope_tier, scope_name)),
        then=then,
        when=when,
        scope_tier=item.scope_tier,
        scope_name=scope_name,
        evidence_memory_ids=tuple(memory_ids),
        evidence_fact_ids=tuple(fact_ids),
        source=item.source,
        added_at=now,
        last_confirmed_at=now,
        enabled=True,
    )
    stored, changed = store.add_rule(rule)
    if changed and not stored.enabled:  # the store returns a re-enabled rule as it was
        return replace(stored, enabled=True), "enabled"
    return stored, "created" if changed else "exists"


def already_saved(rule_id: str, added: RuleAdded) -> str:
    """What every door (add_rule, ``rules add``, the Rules page) answers when the rule was
    there: ``enabled`` says the add enabled a disabled rule again; ``exists``, that nothing
    changed."""
    if added == "enabled":
        return f"Rule already saved ({rule_id}); it was disabled and is enabled again."
    return f"Rule already saved ({rule_id}). An identical rule is not added twice."


def _id_given_before(store: Store, item: RuleInput, composed_id: str) -> str:
    """``composed_id``, or the id a release before rules were kept in NFC gave these words,
    when the store holds that rule and none by ``composed_id``: first as typed (``e`` and an
    accent), then fully decomposed (NFD), as that release kept them when they were typed so.
    Adding the same words again, in either spelling, finds the rule added then, not a second
    one. A project's name stays as given: the upgrade keyed its rules by the project in NFC."""
    typed = (item.then, item.when, item.scope_name)
    if all(text.isascii() for text in typed):  # nearly every rule: one spelling, no look-up
        return composed_id
    situation = item.scope_tier == "situation"

    def spelled(form: Callable[[str], str]) -> tuple[str, str, str]:
        name = item.scope_name  # a project's key is in NFC since the upgrade re-keyed its rules
        return form(item.then), form(item.when), form(name) if situation else name

    spellings = dict.fromkeys((typed, spelled(decomposed)))
    spellings.pop(spelled(canonical), None)  # no composable character: nothing stored otherwise
    ids: dict[str, None] = {}
    for then, when, scope_name in spellings:
        words = rule_words(then, when, compose=False)
        stored_name = stored_scope_name(scope_name, compose=False)
        redacted = (redact_secrets(words[0]), redact_secrets(words[1]))
        ids[rule_id(*redacted, item.scope_tier, stored_name)] = None
    ids.pop(composed_id, None)
    for id_ in ids:  # a new rule costs one look-up per other spelling, a found one one more
        if store.get_rule(id_) is not None:  # a composed twin wins
            return id_ if store.get_rule(composed_id) is None else composed_id
    return composed_id


def no_such_rule(rule_id: str) -> NotFoundError:
    """The error for an id that names no rule: the id quoted on one line, neutralized, and
    redacted (a caller may have pasted a secret in its place)."""
    return NotFoundError(f'No rule with id "{escaped(one_line(redact_secrets(rule_id)))}".')


def confirm_rule(
    store: Store, rule_id: str, now: int, projects: tuple[str, ...] | None = None
) -> None:
    """Record that a rule still holds; a project-limited caller may confirm only its own
    projects' rules (another project's rule is as unknown as a missing one).

    Raises:
        NotFoundError: no such rule, or one of a project the caller cannot see.
        ForbiddenError: a rule for every project or a situation, and a project-limited caller.
    """
    rule = store.get_rule(rule_id)
    if rule is None or not rule_visible(rule, projects):  # the id quoted on one line, neutralized
        raise no_such_rule(rule_id)
    if projects is not None and rule.scope_tier != "project":  # no scopeTier argument to name
        raise ForbiddenError(
            f'Rule {rule.id} applies in every project (scopeTier "{rule.scope_tier}"); this token'
            " is limited to projects, so confirming it is not allowed for this token."
        )
    store.confirm_rule(rule_id, now)


def rule_visible(rule: Rule, projects: tuple[str, ...] | None) -> bool:
    """Whether a caller limited to ``projects`` sees the rule: every rule that applies in one
    of its projects (everywhere and situation rules, and its projects' own)."""
    return projects is None or rule.scope_tier != "project" or rule.scope_name in projects


def check_rule_tier(scope_tier: str, projects: tuple[str, ...] | None) -> None:
    """Rules that apply beyond one project are made by callers of every project (the message
    names the ``scopeTier`` argument of ``add_rule``).

    Raises:
        ForbiddenError: an everywhere or situation rule, and a project-limited caller.
    """
    if projects is not None and scope_tier != "project":
        raise ForbiddenError(
            'This token is limited to projects: use scopeTier "project".'
            f' scopeTier "{scope_tier}" is not allowed for this token.'
        )


def recheck_reason(store: Store, rule: Rule, now: int) -> str | None:
    """Why an enabled rule should be looked at again, or None: every reason that holds, joined
    with "; " in a fixed order (an evidence memory dismissed, an evidence fact dismissed, one
    superseded, not confirmed for 90 days), each naming its lowest id. Evidence that changed
    before the rule was last confirmed was seen by whoever confirmed it: ``confirm_rule``
    clears it. Adding a rule is no such check: evidence already dismissed or superseded then
    flags it. A dismissed fact is named dismissed, not also superseded."""
    since = rule.last_confirmed_at if rule.last_confirmed_at > rule.added_at else 0
    memories = store.dismissed_memory_ids(rule.evidence_memory_ids, since)
    facts = store.dismissed_fact_ids(rule.evidence_fact_ids, since)
    superseded = store.superseded_fact_ids(rule.evidence_fact_ids, now=now, since=since) - facts
    reasons = [
        f"evidence {kind} #{min(ids)} was {change}"
        for kind, ids, change in (
            ("memory", memories, "dismissed"),
            ("fact", facts, "dismissed"),
            ("fact", superseded, "superseded"),
        )
        if ids
    ]
    days = (now - rule.last_confirmed_at) // DAY_MS
    if days >= RECHECK_AFTER_DAYS:
        reasons.append(f"not confirmed for {days} days")
    return "; ".join(reasons) or None


def rules_for_project(rules: Sequence[Rule], project: str) -> list[Rule]:
    """Rules that apply in a project: everywhere, this project's, and situational ones."""
    return [rule for rule in rules if rule.scope_tier != "project" or rule.scope_name == project]


def one_per_line(rules: Sequence[Rule], line: Callable[[Rule], str]) -> list[Rule]:
    """``rules`` where they are shown as lines for one project: the first of those whose
    ``line`` is the same (an everywhere rule and a project rule with the same words say the
    same thing there), so that no line is shown twice."""
    first: dict[str, Rule] = {}
    for rule in rules:
        first.setdefault(line(rule), rule)
    return list(first.values())
