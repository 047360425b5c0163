"""What an error repeats of a client's value: a secret redacted before the value is cut (a cut
secret might no longer look like one), its invisible characters as escapes, and ordinary text
exactly as sent."""

from __future__ import annotations

from aletheia_mem.domain.echoes import MAX_ECHO, echoed, redacted_echo

GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_ordinary_names_are_repeated_as_sent() -> None:
    for name in ("search", "drop_tables", "outil_é中", "x" * MAX_ECHO):
        assert redacted_echo(name) == echoed(name) == name
    assert echoed("ping\u200b") == "ping\\u200b"
    assert echoed("y" * (MAX_ECHO + 1)) == "y" * MAX_ECHO + "..."


def test_a_secret_is_redacted_before_the_name_is_cut() -> None:
    """Cut first, the token's first 30 characters would be repeated, too short to be seen as
    one."""
    name = "x" * 70 + GH
    assert echoed(name) == "x" * 70 + "[REDACTED]"
    assert echoed(f"search\u202e{GH}") == "search\\u202e[REDACTED]"
    assert redacted_echo(f"http://{GH}.evil.com", 300) == "http://[REDACTED].evil.com"


def test_a_name_of_megabytes_is_cut_with_no_secret_left_in_it() -> None:
    shown = echoed(f"{GH} " + "z" * 4_000_000)
    assert shown == "[REDACTED] " + "z" * (MAX_ECHO - len("[REDACTED] ")) + "..."
