"""Every number option of every command is read from the ASCII digits 0-9 alone: ``int`` also
reads blanks around a number, other scripts' digits and "1_000", which would start a server on
a port nobody typed (``aletheia-server --port " 8765 "``) or page where nobody asked.
``aletheia-sync``'s options are checked in tests/hub/test_hub_number_options.py; ``aletheia-mcp``
and ``aletheia-hook`` take no number."""

from __future__ import annotations

import pytest

from aletheia_mem.server import http_main
from tests.cli.conftest import Invoke

NOT_ASCII_DIGITS = [" 8", "8 ", "\t8", "\n8", "\u0668", "\uff18", "1_0", "\u00b2"]
SERVER_OPTIONS = {
    "--port": "--port must be a port number from 0 to 65535.",
    "--workers": "--workers must be a whole number from 1 to 32.",
}
# Each count and id of the ``aletheia`` CLI, an option or an argument, after a command taking it.
CLI_NUMBERS = [
    ["search", "pnpm", "--limit"],
    ["search", "pnpm", "--offset"],
    ["timeline", "1", "--before"],
    ["timeline", "1", "--after"],
    ["timeline"],
    ["show"],
    ["dismiss"],
    ["restore"],
    ["context", "--limit"],
    ["lists", "list", "--limit"],
    ["audit", "--local", "--limit"],
    ["audit", "--local", "--offset"],
    ["audit", "--local", "--upto"],
    ["rules", "add", "Use pnpm", "--evidence-memory"],
    ["rules", "add", "Use pnpm", "--evidence-fact"],
    ["sync", "--page-size"],
]


# Refused after the numbers are read: a number taken by mistake stops the server there, so that
# the test fails rather than serves.
NO_KEY_FOR = ["--host", "192.0.2.1"]  # a documentation address (TEST-NET-1)


@pytest.mark.parametrize("option", sorted(SERVER_OPTIONS))
def test_the_http_server_refuses_a_number_not_in_ascii_digits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    monkeypatch.delenv("ALETHEIA_API_KEY", raising=False)
    for value in NOT_ASCII_DIGITS:
        with pytest.raises(SystemExit) as stopped:
            http_main.main([*NO_KEY_FOR, option, value])
        assert stopped.value.code == 2, value
        assert capsys.readouterr().err == f"aletheia-server: {SERVER_OPTIONS[option]}\n", value


@pytest.mark.parametrize("option", sorted(SERVER_OPTIONS))
def test_aletheia_serve_refuses_a_number_not_in_ascii_digits(
    run: Invoke, monkeypatch: pytest.MonkeyPatch, option: str
) -> None:
    monkeypatch.delenv("ALETHEIA_API_KEY", raising=False)
    for value in NOT_ASCII_DIGITS:
        result = run("serve", *NO_KEY_FOR, option, value)
        assert result.exit_code == 2, value
        assert result.stderr.startswith(f"Error: {SERVER_OPTIONS[option]}"), value


def test_blanks_around_the_port_variable_are_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable's value may carry blanks (an env file's line): only options are exact."""
    monkeypatch.setenv("ALETHEIA_PORT", " 8766 ")
    monkeypatch.setenv("ALETHEIA_WORKERS", " 1 ")
    settings = http_main.load_http_settings()
    assert (settings.port, settings.workers) == (8766, 1)


@pytest.mark.parametrize("command", CLI_NUMBERS, ids=" ".join)
def test_a_cli_count_or_id_not_in_ascii_digits_is_refused(run: Invoke, command: list[str]) -> None:
    for value in NOT_ASCII_DIGITS:
        result = run(*command, value)
        assert result.exit_code == 2, (value, result.output)
        assert repr(value) in result.stderr, value
        assert result.stderr.count("\n") == 1, value
