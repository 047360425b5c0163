"""Words that look the same but are encoded differently (``é`` as one code point, or ``e`` and a
combining accent, as macOS gives them) are one rule and one memory: "an identical rule is not
added twice", and "Saving the same project, title and text again returns the existing id"
(docs/configuration.md, "One spelling for names"). Over the tools, on both stores."""

from __future__ import annotations

import re

from aletheia_mem.domain import rules
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.storage.entries import NewMemory, Rule
from tests.tools.helpers import body_lines, db_rows, rule_id_of, saved_id

COMPOSED, DECOMPOSED = "Caf\u00e9 rule", "Cafe\u0301 rule"


def _already(result_text: str) -> str:
    match = re.fullmatch(r"Rule already saved \((r_[0-9a-f]{10})\)\. .*", result_text)
    assert match, result_text
    return match.group(1)


def test_a_rule_given_decomposed_is_the_composed_rule(call, app):
    rule_id = rule_id_of(call("add_rule", then=COMPOSED))

    again = call("add_rule", then=DECOMPOSED)

    assert not again.is_error, again.text
    assert _already(again.text) == rule_id
    assert len(body_lines(call("list_rules"))) == 1
    assert db_rows(app, "SELECT then_text FROM rules") == [(COMPOSED,)]


def test_a_rule_first_given_decomposed_is_stored_composed(call, app):
    rule_id = rule_id_of(call("add_rule", then=DECOMPOSED, when="you order a cafe\u0301"))

    again = call("add_rule", then=COMPOSED, when="you order a caf\u00e9")

    assert _already(again.text) == rule_id
    assert db_rows(app, "SELECT then_text, when_text FROM rules") == [
        (COMPOSED, "you order a caf\u00e9")
    ]


def test_a_situation_named_decomposed_is_the_composed_situation(call):
    rule_id = rule_id_of(
        call("add_rule", then="Speak French", scopeTier="situation", scopeName="Caf\u00e9")
    )

    again = call("add_rule", then="Speak French", scopeTier="situation", scopeName="Cafe\u0301")

    assert _already(again.text) == rule_id


def test_the_session_context_shows_the_rule_once(call):
    call("add_rule", then=COMPOSED, when="you order")
    call("add_rule", then=DECOMPOSED, when="you order")

    context = call("session_start_context").text

    assert context.count("When you order: Caf") == 1, context


def test_a_memory_saved_again_decomposed_is_already_saved(call, app):
    first = saved_id(call("save_memory", text="r\u00e9sum\u00e9 dedupe", project="caf\u00e9"))

    again = call("save_memory", text="re\u0301sume\u0301 dedupe", project="cafe\u0301")

    assert again.text == f"Already saved as #{first}."
    assert db_rows(app, "SELECT title, text FROM memories") == [
        ("r\u00e9sum\u00e9 dedupe", "r\u00e9sum\u00e9 dedupe")
    ]


def test_a_title_given_decomposed_is_the_composed_title(call, app):
    first = saved_id(call("save_memory", text="The menu", title="Caf\u00e9 menu"))

    again = call("save_memory", text="The menu", title="Cafe\u0301 menu")

    assert again.text == f"Already saved as #{first}."
    assert db_rows(app, "SELECT title FROM memories") == [("Caf\u00e9 menu",)]


# -- kept as a release before one spelling stored them (the words as typed, decomposed) --------


def _stored_as_typed_before(app, title: str, text: str) -> int:
    """A note as that release stored it: its title, text and dedupe key of the words as typed."""
    new = NewMemory(
        project="shop", type="note", kind="note", title=title, text=text, tool="cli",
        created_at=app.clock(), dedupe_key=dedupe_key(title, text),
    )  # fmt: skip
    memory, created = app.store.add_memory(new)
    assert created
    return memory.id


def test_a_note_stored_decomposed_before_is_already_saved_when_saved_again(call, app):
    title, text = "Re\u0301sume\u0301 build", "Re\u0301sume\u0301 builds need node 20"
    before = _stored_as_typed_before(app, title, text)

    again = call("save_memory", text=text, title=title)

    assert again.text == f"Already saved as #{before}."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(1,)]


def test_a_note_stored_composed_wins_over_one_stored_decomposed_before(call, app):
    # that release kept both spellings, each as it was typed
    text = "Re\u0301sume\u0301 notes"
    _stored_as_typed_before(app, text, text)
    composed = _stored_as_typed_before(app, "R\u00e9sum\u00e9 notes", "R\u00e9sum\u00e9 notes")

    again = call("save_memory", text=text)

    assert again.text == f"Already saved as #{composed}."


def _rule_stored_before(
    app, then: str, when: str = "always", tier: str = "everywhere", name: str = ""
) -> str:
    """A rule as that release stored it: its words as typed, its id theirs."""
    before = rules.rule_id(then, when, tier, name)
    app.store.add_rule(
        Rule(
            id=before, then=then, when=when, scope_tier=tier, scope_name=name,
            evidence_memory_ids=(), evidence_fact_ids=(), source="cli", added_at=app.clock(),
            last_confirmed_at=app.clock(), enabled=True,
        )
    )  # fmt: skip
    return before


def test_a_rule_stored_decomposed_before_is_already_saved_when_added_again(call, app):
    then = "Use cafe\u0301 style"
    before = _rule_stored_before(app, then)

    again = call("add_rule", then=then)

    assert _already(again.text) == before
    assert db_rows(app, "SELECT count(*) FROM rules") == [(1,)]


# -- the same words typed composed again: a release before kept them decomposed (NFD) ----------


def test_a_note_stored_decomposed_before_is_already_saved_when_saved_composed(call, app):
    before = _stored_as_typed_before(
        app, "Re\u0301sume\u0301 build", "Re\u0301sume\u0301 builds need node 20"
    )

    again = call(
        "save_memory", text="R\u00e9sum\u00e9 builds need node 20", title="R\u00e9sum\u00e9 build"
    )

    assert again.text == f"Already saved as #{before}."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(1,)]


def test_a_note_titled_by_its_decomposed_text_before_is_already_saved_when_saved_composed(
    call, app
):
    text = "Cafe\u0301 orders ship on Mondays"
    before = _stored_as_typed_before(app, text, text)  # no title given: its text's first words

    again = call("save_memory", text="Caf\u00e9 orders ship on Mondays")

    assert again.text == f"Already saved as #{before}."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(1,)]


def test_a_note_stored_composed_wins_over_its_decomposed_twin_when_saved_composed(call, app):
    _stored_as_typed_before(app, "Cafe\u0301 hours", "Cafe\u0301 hours")
    composed = _stored_as_typed_before(app, "Caf\u00e9 hours", "Caf\u00e9 hours")

    again = call("save_memory", text="Caf\u00e9 hours")

    assert again.text == f"Already saved as #{composed}."


def test_a_rule_stored_decomposed_before_is_already_saved_when_added_composed(call, app):
    before = _rule_stored_before(app, "Use cafe\u0301 style", "you write a cafe\u0301 menu")

    again = call("add_rule", then="Use caf\u00e9 style", when="you write a caf\u00e9 menu")

    assert _already(again.text) == before
    assert db_rows(app, "SELECT count(*) FROM rules") == [(1,)]


def test_a_situation_rule_stored_decomposed_before_is_already_saved_when_added_composed(call, app):
    before = _rule_stored_before(app, "Speak French", tier="situation", name="Cafe\u0301")

    again = call("add_rule", then="Speak French", scopeTier="situation", scopeName="Caf\u00e9")

    assert _already(again.text) == before
    assert db_rows(app, "SELECT count(*) FROM rules") == [(1,)]


def test_a_project_rule_stored_decomposed_before_is_already_saved_when_added_composed(call, app):
    # the upgrade keyed it by its project in NFC, its words as they were stored
    before = _rule_stored_before(app, "Price in cafe\u0301 euros", tier="project", name="shop")

    again = call("add_rule", then="Price in caf\u00e9 euros", scopeTier="project")

    assert _already(again.text) == before
    assert db_rows(app, "SELECT count(*) FROM rules") == [(1,)]


def test_a_rule_stored_composed_wins_over_its_decomposed_twin_when_added_composed(call, app):
    _rule_stored_before(app, "Use cafe\u0301 cups")
    composed = _rule_stored_before(app, "Use caf\u00e9 cups")

    again = call("add_rule", then="Use caf\u00e9 cups")

    assert _already(again.text) == composed
