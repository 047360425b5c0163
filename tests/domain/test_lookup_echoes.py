"""A lookup that finds nothing names what it was given, redacted: a secret the caller typed
into a subject, a rule id or a query is not echoed back (nor kept in a log of the answer). A
fact's subject is looked up as facts keep it, redacted, so a subject given with its secret still
finds the fact. Tools in process on both stores, the JSON API and the CLI as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from tests.conftest import ToolCaller
from tests.e2e.http_server import running_server

SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SUBJECT = f"password={SECRET}"
SHOWN = "password=[REDACTED]"


def _answer(call: ToolCaller, name: str, **arguments: object) -> str:
    result = call(name, **arguments)
    answered = result.text + json.dumps(result.structured)
    assert SECRET not in answered
    return result.text


def test_a_lookup_that_finds_nothing_shows_what_it_was_given_redacted(call: ToolCaller) -> None:
    assert call("save_memory", text="Deploy notes for the shop").is_error is False
    history = _answer(call, "fact_history", subject=SUBJECT)
    assert history == f'No facts found for subject "{SHOWN}".'
    search = _answer(call, "search", query=SUBJECT)
    assert search == f'No matches. Nothing in project "shop" matches "{SHOWN}".'
    assert call("confirm_rule", id=SUBJECT).is_error is True
    confirm = _answer(call, "confirm_rule", id=SUBJECT)
    assert confirm == f'No rule with id "{SHOWN}".'


def test_a_subject_given_with_its_secret_finds_the_fact_kept_redacted(call: ToolCaller) -> None:
    call(
        "save_memory",
        text="Vault notes",
        facts=[{"subject": SUBJECT, "predicate": "is", "object": "old"}],
    )
    history = _answer(call, "fact_history", subject=SUBJECT)
    assert f'Current facts about "{SHOWN}":\n- fact #1 {SHOWN} · is = old' in history


def test_the_json_api_and_the_cli_show_a_subject_redacted(tmp_path: Path) -> None:
    with running_server(tmp_path / "api") as server:
        reply = server.api("GET", f"/api/facts?subject={quote(SUBJECT)}")
        assert reply.status == 200, reply.body
        assert reply.json() == {"subject": SHOWN, "facts": []}
        missing = server.api("POST", f"/api/rules/{quote(SUBJECT)}/confirm")
        assert missing.status == 404
        assert SECRET not in missing.body.decode()
    env = {**os.environ, "ALETHEIA_DATA_DIR": str(tmp_path / "cli"), "NO_COLOR": "1"}
    for args in (("save", "Deploy notes", "-p", "shop"), ("facts", "history", SUBJECT)):
        done = subprocess.run(
            [sys.executable, "-m", "aletheia_mem", *args],
            env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout + done.stderr
    assert done.stdout.strip() == f'No facts found for subject "{SHOWN}".'
