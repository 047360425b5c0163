"""A usage error never prints a secret: ``aletheia save "$(cat key.txt)"`` of a private key,
whose text starts with ``-``, is an unknown option to click; the error shows it redacted and
cut short, and says how to pass such a text. A real ``aletheia`` process, a real store folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ALETHEIA = Path(sys.executable).parent / "aletheia"
BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
KEY = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}\n-----END OPENSSH PRIVATE KEY-----"
TOKEN = "ghp_pq7wr2ty9ui4op1as6df3gh8jk5lzxcvbn0mq"
HINT = "To pass a text that starts with -, put -- before it."


def aletheia(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a worktree's sources, when tested
    }
    return subprocess.run(
        [str(ALETHEIA), *args], capture_output=True, text=True, timeout=30, env=env, check=False
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_private_key_taken_for_an_option_is_not_printed(
    tmp_path: Path, json_flag: list[str]
) -> None:
    result = aletheia(tmp_path, "save", *json_flag, KEY)
    assert result.returncode == 2
    assert BODY[:8] not in result.stderr + result.stdout
    assert result.stderr == (
        "Error: No such option '-----BEGIN OPENSSH PRIVATE KEY-----\\n[REDACTED]...'."
        f" {HINT} Try 'aletheia save --help'.\n"
    )
    if json_flag:
        told = json.loads(result.stdout)["error"]["message"]
        assert (
            told == f"No such option '-----BEGIN OPENSSH PRIVATE KEY-----\\n[REDACTED]...'. {HINT}"
        )
    assert not (tmp_path / "data").exists()  # nothing was stored


def test_an_unknown_option_is_cut_to_40_characters(tmp_path: Path) -> None:
    result = aletheia(tmp_path, "search", "-" + "x" * 200)
    assert result.stderr == (
        f"Error: No such option '-x'. {HINT} Try 'aletheia search --help'.\n"
    )  # click names the first of the short options it reads
    long = aletheia(tmp_path, "save", "--" + "y" * 100 + " words after it")
    assert long.stderr == (
        f"Error: No such option '--{'y' * 38}...'. {HINT} Try 'aletheia save --help'.\n"
    )


def test_a_secret_as_an_option_s_value_is_redacted(tmp_path: Path) -> None:
    result = aletheia(tmp_path, "save", "--type", TOKEN, "words")
    assert result.returncode == 2
    assert TOKEN not in result.stderr
    assert result.stderr.startswith("Error: Invalid value for '--type': '[REDACTED]' is not one")


def test_a_mistyped_option_is_told_as_before(tmp_path: Path) -> None:
    result = aletheia(tmp_path, "search", "pnpm", "--limt", "3")
    assert result.stderr == (
        "Error: No such option '--limt'. Did you mean '--limit'? Try 'aletheia search --help'.\n"
    )


def test_a_text_after_two_dashes_is_saved(tmp_path: Path) -> None:
    result = aletheia(tmp_path, "save", "--", "-not an option, a note")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Saved as #1")
