"""save_memory: ids, dedupe, defaults, limits, the facts and files extensions, redaction."""

from __future__ import annotations

import pytest

from tests.stores import dump
from tests.tools.helpers import body_lines, db_rows, unwrap

REFERENCE_CALL = {
    "text": "The staging API key lives in the team vault, not in .env",
    "title": "Staging key location",
    "type": "gotcha",
}
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _memory_row(app, memory_id):
    return db_rows(
        app,
        "SELECT project, type, kind, title, text, tool, pinned, facts, files FROM memories"
        " WHERE id = ?",
        memory_id,
    )[0]


def test_save_and_save_again_answer_as_in_the_reference(call, app):
    for number in range(1, 15):
        call("save_memory", text=f"earlier memory {number}")

    first = call("save_memory", **REFERENCE_CALL)
    again = call("save_memory", **REFERENCE_CALL)

    assert first.text == "Saved as #15 in shop."
    assert not first.is_error
    assert again.text == "Already saved as #15."
    assert not again.is_error
    assert db_rows(app, "SELECT count(*) FROM memories") == [(15,)]


def test_a_save_answered_as_saved_before_uses_up_no_id(call):
    call("save_memory", **REFERENCE_CALL)
    for _ in range(3):
        assert call("save_memory", **REFERENCE_CALL).text == "Already saved as #1."

    assert call("save_memory", text="the next memory").text == "Saved as #2 in shop."


def test_same_text_with_another_title_or_project_is_a_new_memory(call):
    call("save_memory", **REFERENCE_CALL)

    other_title = call("save_memory", **{**REFERENCE_CALL, "title": "Where the key is"})
    other_project = call("save_memory", **REFERENCE_CALL, project="billing")

    assert other_title.text == "Saved as #2 in shop."
    assert other_project.text == "Saved as #3 in billing."


def test_memory_is_stored_with_its_fields(call, app):
    call("save_memory", **REFERENCE_CALL, pinned=True)

    assert _memory_row(app, 1) == (
        "shop",
        "gotcha",
        "note",
        "Staging key location",
        "The staging API key lives in the team vault, not in .env",
        "cli",
        1,
        "[]",
        "[]",
    )


def test_defaults_are_type_note_unpinned_and_the_working_directory_project(call, app):
    call("save_memory", text="Staging deploys need the VPN")

    project, type_, kind, *_, pinned, _, _ = _memory_row(app, 1)
    assert (project, type_, kind, pinned) == ("shop", "note", "note", 0)


def test_default_title_is_the_first_100_characters_of_the_text(call, app):
    text = "Deploys " + "x" * 150

    call("save_memory", text=text)

    assert _memory_row(app, 1)[3] == text[:100]


def test_blank_title_falls_back_to_the_default(call, app):
    call("save_memory", text="Staging deploys need the VPN", title="   ")

    assert _memory_row(app, 1)[3] == "Staging deploys need the VPN"


def test_project_is_trimmed_and_lower_cased(call):
    assert call("save_memory", text="x", project="  Billing ").text == "Saved as #1 in billing."


def test_star_is_not_a_project_to_save_to(call):
    result = call("save_memory", text="x", project="*")

    assert result.is_error
    assert result.text == 'project "*" is only for search and timeline.'


@pytest.mark.parametrize("project", ["shop\u202eevil", "sh\u200bop", "shop\x1b[2J", "a\nb"])
def test_a_project_with_control_or_format_characters_is_refused(call, app, project):
    # Import and sync refuse such a project: one saved would make the store's export
    # unimportable and stop every sync of the store at that record.
    result = call("save_memory", text="x", project=project)

    assert result.is_error
    assert result.text == "project must not contain control or format characters."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


def test_caller_is_recorded_as_the_memory_tool(call, app, as_caller):
    call("save_memory", _app=as_caller(caller="cursor"), text="cursor prompt about pnpm")

    assert _memory_row(app, 1)[5] == "cursor"


def test_text_is_required(call, app):
    for arguments in ({}, {"text": ""}, {"text": "  \n "}):
        result = call("save_memory", **arguments)
        assert result.is_error
        assert result.text == "text is required."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


def test_text_of_20000_characters_is_accepted(call):
    assert call("save_memory", text="a" * 20_000).text == "Saved as #1 in shop."


def test_text_over_20000_characters_is_an_error(call, app):
    result = call("save_memory", text="a" * 20_001)

    assert result.is_error
    assert result.text == "text must be at most 20000 characters."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


def test_title_of_400_characters_is_accepted(call):
    assert call("save_memory", text="x", title="t" * 400).text == "Saved as #1 in shop."


def test_title_over_400_characters_is_an_error(call, app):
    result = call("save_memory", text="x", title="t" * 401)

    assert result.is_error
    assert result.text == "title must be at most 400 characters."
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


def test_title_is_measured_and_kept_trimmed_as_list_and_scope_names_are(call, app):
    padded = call("save_memory", text="x", title="  " + "t" * 400 + "\n ")
    too_long = call("save_memory", text="y", title=" " + "t" * 401 + " ")

    assert padded.text == "Saved as #1 in shop."
    assert db_rows(app, "SELECT title FROM memories") == [("t" * 400,)]
    assert too_long.text == "title must be at most 400 characters."


def test_unknown_type_is_an_error(call):
    result = call("save_memory", text="x", type="todo")

    assert result.is_error
    assert result.text == (
        "type must be one of: decision, gotcha, bugfix, feature, refactor, change, discovery, note."
    )


@pytest.mark.parametrize(
    "memory_type",
    ["decision", "gotcha", "bugfix", "feature", "refactor", "change", "discovery", "note"],
)
def test_each_of_the_eight_types_is_saved(call, app, memory_type):
    call("save_memory", text="x", type=memory_type)

    assert _memory_row(app, 1)[1] == memory_type


def test_pinned_memory_is_listed_under_pinned(call):
    call("save_memory", text="Use pnpm, not npm, in the shop repo", type="decision", pinned=True)

    lines = body_lines(call("session_start_context"))

    assert lines[1:3] == ["## Pinned", "- #1 19:46 [D] Use pnpm, not npm, in the shop repo"]


def test_files_extension_lets_search_find_the_memory_by_path(call, app):
    call("save_memory", text="checkout rounding", files=[" src/checkout.py ", "src/checkout.py"])

    assert _memory_row(app, 1)[8] == '["src/checkout.py"]'
    assert body_lines(call("search", file="src/checkout.py")) == [
        "#1 2026-10-29 [note] checkout rounding  (shop, cli)"
    ]


def test_facts_extension_stores_the_facts_and_their_statements(call, app):
    result = call(
        "save_memory",
        text="Payments run on PostgreSQL 16",
        facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}],
    )

    assert result.text == "Saved as #1 in shop."

    assert _memory_row(app, 1)[7] == '["payments-api database PostgreSQL 16"]'
    assert db_rows(app, "SELECT subject, predicate, object, memory_id, source FROM facts") == [
        ("payments-api", "database", "PostgreSQL 16", 1, "cli")
    ]


def test_fact_without_an_object_is_an_error_and_nothing_is_saved(call, app):
    result = call(
        "save_memory", text="x", facts=[{"subject": "payments-api", "predicate": "database"}]
    )

    assert result.is_error
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]


NUL_IN_FACT = "each fact must not contain NUL characters."


@pytest.mark.parametrize(
    ("fact", "message"),
    [
        ("a\x00b", NUL_IN_FACT),
        ({"subject": "a\x00b", "predicate": "is", "object": "o"}, NUL_IN_FACT),
        ({"subject": "s", "predicate": "is", "object": "o\x00"}, NUL_IN_FACT),
        ("x" * 6003, "each fact must be at most 6002 characters."),
    ],
)
def test_a_fact_an_export_could_not_import_again_is_refused_and_nothing_is_saved(
    call, app, fact, message
):
    result = call("save_memory", text="Facts that would break an import", facts=[fact])

    assert result.is_error
    assert result.text == message
    assert db_rows(app, "SELECT count(*) FROM memories") == [(0,)]
    assert db_rows(app, "SELECT count(*) FROM facts") == [(0,)]


def test_a_statement_of_6002_characters_is_saved(call):
    assert call("save_memory", text="A long statement", facts=["x" * 6002]).text == (
        "Saved as #1 in shop."
    )


def test_secrets_are_redacted_before_they_are_stored(call, app):
    text = f"Deploy with DB_PASSWORD=hunter2hunter2 and GITHUB_TOKEN={GITHUB_TOKEN}"

    call(
        "save_memory",
        text=text,
        title=f"token {GITHUB_TOKEN}",
        facts=[{"subject": "ci", "predicate": "token", "object": GITHUB_TOKEN}],
        files=["https://deploy:hunter2hunter2@example.com/app.cfg"],
    )

    stored = " ".join(str(value) for value in _memory_row(app, 1))
    facts = " ".join(str(value) for row in db_rows(app, "SELECT * FROM facts") for value in row)
    everything = "\n".join(dump(app.store))  # every table: the full-text index's too
    for secret in ("hunter2hunter2", GITHUB_TOKEN):
        assert secret not in stored
        assert secret not in facts
        assert secret not in everything
    assert "DB_PASSWORD=[REDACTED]" in stored
    assert "token [REDACTED]" in stored
    body = unwrap(call("get_observations", ids=[1]))
    assert "hunter2hunter2" not in body
    assert GITHUB_TOKEN not in body


def test_innocent_text_is_stored_unchanged(call, app):
    text = "Set password_min_length=12 and read the token from os.environ['API_TOKEN']"

    call("save_memory", text=text)

    assert _memory_row(app, 1)[4] == text


def test_same_text_without_a_title_is_saved_once(call):
    first = call("save_memory", text="Staging deploys need the VPN")
    again = call("save_memory", text="Staging deploys need the VPN")

    assert (first.text, again.text) == ("Saved as #1 in shop.", "Already saved as #1.")


def test_saving_a_dismissed_memory_again_says_it_is_dismissed(call):
    call("save_memory", text="Staging deploys need the VPN")
    call("dismiss_memory", id=1)

    again = call("save_memory", text="Staging deploys need the VPN")

    assert not again.is_error
    assert again.text == (
        "Already saved as #1. It is dismissed: hidden from search and context;"
        " restore_memory brings it back."
    )


def test_facts_sent_with_an_existing_memory_are_still_recorded(call):
    call("save_memory", text="Payments run on Postgres")
    fact = {"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}

    again = call("save_memory", text="Payments run on Postgres", facts=[fact])
    same_again = call("save_memory", text="Payments run on Postgres", facts=[fact])

    assert again.text == (
        "Already saved as #1. A fact it states is new or changed; fact_history shows it."
    )
    assert same_again.text == "Already saved as #1."
    assert "PostgreSQL 16" in call("fact_history", subject="payments-api").text


def test_the_same_call_with_facts_again_answers_as_in_the_reference(call):
    fact = {"subject": "api", "predicate": "runtime", "object": "node 18"}
    call("save_memory", text="Runtime is node", facts=[fact])

    again = call("save_memory", text="Runtime is node", facts=[fact])

    assert again.text == "Already saved as #1."


def test_saving_again_with_a_new_fact_value_says_the_fact_changed(call, clock):
    old = {"subject": "api", "predicate": "runtime", "object": "node 18"}
    new = {**old, "object": "node 22"}
    call("save_memory", text="Runtime is node", title="Runtime", facts=[old])
    # a second later: a value saved in the same millisecond would hold from the next one
    # (tests/tools/test_facts_same_instant.py), not yet current at this one
    clock.advance(1000)

    again = call("save_memory", text="Runtime is node", title="Runtime", facts=[new])

    assert again.text == (
        "Already saved as #1. A fact it states is new or changed; fact_history shows it."
    )
    assert "node 22" in call("fact_history", subject="api").text


def test_saving_again_the_value_of_a_dismissed_fact_says_nothing_changed(call):
    fact = {"subject": "db", "predicate": "engine", "object": "postgres"}
    call("save_memory", text="The database", facts=[fact])
    call("dismiss_memory", id=1, type="fact")

    again = call("save_memory", text="The database", facts=[fact])

    assert again.text == "Already saved as #1."


def test_saving_again_names_the_type_pin_and_files_it_did_not_apply(call, app):
    call("save_memory", text="Runtime is node")

    again = call(
        "save_memory", text="Runtime is node", type="decision", pinned=True, files=["Dockerfile"]
    )
    only_pin = call("save_memory", text="Runtime is node", pinned=True)

    assert again.text == "Already saved as #1. Its type, pin and files stay as first saved."
    assert only_pin.text == "Already saved as #1. Its pin stays as first saved."
    assert _memory_row(app, 1)[1] == "note"


def test_saving_again_says_files_stay_and_a_type_stays(call):
    call("save_memory", text="dedupe files")

    only_files = call("save_memory", text="dedupe files", files=["x.py"])
    only_type = call("save_memory", text="dedupe files", type="gotcha")
    pin_and_files = call("save_memory", text="dedupe files", pinned=True, files=["y.py"])

    assert only_files.text == "Already saved as #1. Its files stay as first saved."
    assert only_type.text == "Already saved as #1. Its type stays as first saved."
    assert pin_and_files.text == "Already saved as #1. Its pin and files stay as first saved."


def test_saving_again_with_what_the_memory_already_has_adds_nothing(call):
    call("save_memory", text="Runtime is node", type="decision", pinned=True, files=["a.py"])

    again = call(
        "save_memory", text="Runtime is node", type="decision", pinned=True, files=["a.py"]
    )
    omitted = call("save_memory", text="Runtime is node")

    assert again.text == omitted.text == "Already saved as #1."


PASSPHRASE_NOTES = [
    ("db_password=CorrectHorseBatteryStaple", "CorrectHorseBatteryStaple"),
    ("export DB_PASSWORD=CorrectHorse; ./deploy.sh", "CorrectHorse"),
    (
        '"private_key_id": "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345"',
        "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345",
    ),
    ("db:\n  password: correct horse battery staple\n", "correct horse battery staple"),
]


@pytest.mark.parametrize(("text", "secret"), PASSPHRASE_NOTES)
def test_a_passphrase_or_key_id_is_redacted_before_it_is_stored(call, app, text, secret):
    call("save_memory", text=f"Staging login\n{text}", title="Staging login")

    assert secret not in "\n".join(dump(app.store))
    assert _memory_row(app, 1)[4] == f"Staging login\n{text.replace(secret, '[REDACTED]')}"
    assert secret not in unwrap(call("get_observations", ids=[1]))


@pytest.mark.parametrize(
    "text",
    [
        "f(user, password=PasswordField)",
        "password=PASSWORD_ENV",
        "password: the one in the vault",
        "password: see 1Password",
        '"client_email": "deploy@acme-prod.iam.gserviceaccount.com"',
    ],
)
def test_code_and_prose_about_a_password_are_stored_unchanged(call, app, text):
    call("save_memory", text=text)

    assert _memory_row(app, 1)[4] == text
