"""``aletheia sync`` and ``aletheia connect`` given a bad token or hub URL: one line on stderr
(with ``--json`` also ``{"error": ...}`` on stdout), exit code 2, never a traceback, and never
the token or a password echoed. Real ``aletheia`` runs against a real hub process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub

pytestmark = [pytest.mark.e2e, pytest.mark.sqlite_only]


def aletheia(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        env={**base, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def refused(done: subprocess.CompletedProcess[str], *secrets: str) -> str:
    """The one line of a bad-input refusal (exit code 2), holding none of ``secrets``."""
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr
    for secret in secrets:
        assert secret not in done.stdout + done.stderr
    return done.stderr


def refused_json(done: subprocess.CompletedProcess[str], *secrets: str) -> str:
    line = refused(done, *secrets)
    assert json.loads(done.stdout)["error"]["code"] == "invalid_input"
    return line


@pytest.mark.parametrize(
    "token",
    [
        "alt_abc\nX-Evil: 1",
        "alt_abc\r\nX-Evil: 1",
        "alt_\x1b[31mabc",
        "alt_abc def",
        "alt_ab\u00e9",
    ],
    ids=["newline", "crlf", "escape", "space", "non-ascii"],
)
def test_a_token_holding_what_no_token_holds_is_refused_without_echoing_it(
    tmp_path: Path, token: str
) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        for args in ((), ("--json",)):
            done = aletheia(
                tmp_path, "sync", "--hub", hub.url, *args, env={"ALETHEIA_HUB_TOKEN": token}
            )
            line = refused_json(done, "alt_abc", "alt_ab") if args else refused(done, "alt_")
            assert "ALETHEIA_HUB_TOKEN" in line


@pytest.mark.parametrize(
    "damage",
    [b"garbage\x1b[31m\n\nmore", b"alt_\xff\xfe", b"two words\n"],
    ids=["control", "not-utf8", "space"],
)
def test_a_damaged_remembered_token_is_refused_naming_its_file(
    tmp_path: Path, damage: bytes
) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("sync", None, "laptop")
        assert aletheia(tmp_path, "sync", "--hub", hub.url, "--token", token).returncode == 0
        (tmp_path / "hub-token").write_bytes(damage)
        line = refused_json(aletheia(tmp_path, "sync", "--json"), "garbage", "more", "words")
        assert str(tmp_path / "hub-token") in line
        (tmp_path / "hub-token").write_text(token + "\n")
        assert aletheia(tmp_path, "sync").returncode == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://127.0.0.1:18787/ x",
        "http://127.0.0.1:18787/\nx",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:port",
        "http://",
        "notaurl",
    ],
)
def test_a_malformed_hub_url_is_refused_in_one_line(tmp_path: Path, url: str) -> None:
    refused(aletheia(tmp_path, "sync", "--hub", url, "--token", "alt_abc"), "alt_abc")
    refused_json(aletheia(tmp_path, "sync", "--hub", url, "--token", "alt_abc", "--json"))


def test_a_hub_url_with_a_user_and_password_is_refused_without_the_password(
    tmp_path: Path,
) -> None:
    done = aletheia(tmp_path, "sync", "--hub", "http://user:s3cret@127.0.0.1:18787", "--token", "a")
    line = refused(done, "s3cret")
    assert "user or password" in line and "http://127.0.0.1:18787" in line


def test_the_remembered_hub_under_another_name_says_why_a_token_is_needed(
    tmp_path: Path,
) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("sync", None, "laptop")
        assert aletheia(tmp_path, "sync", "--hub", hub.url, "--token", token).returncode == 0
        other = hub.url.replace("127.0.0.1", "localhost")
        line = refused(aletheia(tmp_path, "sync", "--hub", other), token)
    assert "first time" not in line
    assert f"A token is needed for {other}" in line and hub.url in line


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--http", "http://[::1"), "--http is not a valid URL"),
        (("--http", "http://127.0.0.1:8787/ mcp"), "--http must be an http:// or https:// URL"),
        (("--http", "http://u:pw9@127.0.0.1:8787/mcp"), "--http must not hold a user"),
        (("--http", "http://127.0.0.1:8787/mcp", "--token-env", "BAD NAME$"), "--token-env"),
        (("--http", "http://127.0.0.1:8787/mcp", "--token-env", "1ST"), "--token-env"),
        (("--http", "http://127.0.0.1:8787/mcp", "--token-env", ""), "--token-env"),
    ],
)
def test_connect_refuses_a_bad_remote_address_or_token_variable(
    tmp_path: Path, args: tuple[str, ...], problem: str
) -> None:
    line = refused(aletheia(tmp_path, "connect", "codex", *args), "pw9")
    assert line.startswith(f"Error: {problem}"), line
