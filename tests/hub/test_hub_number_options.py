"""``aletheia-sync``'s numbers (its port, limits and timeout) are read from the ASCII digits 0-9
only, as the ``aletheia`` CLI reads its counts: Python's ``int`` and ``float`` also read other
scripts' digits, "1_000" and blanks around a number, which would start a hub on settings
nobody typed. The script's entry point, and the script run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia_mem.hub.main import main
from tests.hub.helpers import running_hub

NUMBER_OPTIONS = [
    "--port",
    "--rate-limit",
    "--max-connections",
    "--max-client-connections",
    "--header-timeout",
    "--pool-size",
    "--search-cache-mb",
]
ARABIC_INDIC_12 = "\u0661\u0662"
FULL_WIDTH_12 = "\uff11\uff12"
NOT_ASCII_DIGITS = [ARABIC_INDIC_12, FULL_WIDTH_12, "1_000", " 5 ", "5 ", "\t5", "\u00b2"]


def _refusal(option: str, value: str, prog: str = "aletheia-sync") -> str:
    noun = "number" if option == "--header-timeout" else "whole number"
    return (
        f"Error: Argument {option}: {value!r} is not a {noun} in the digits 0-9."
        f" Try '{prog} --help'.\n"
    )


def _stopped_by(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    """The exit code and standard error of ``aletheia-sync ARGV`` with half a TLS pair: a hub
    that took the number stops at that instead of serving (a missed refusal fails the test,
    not hangs it)."""
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--tls-cert", "none.pem"])
    return stopped.value.code, capsys.readouterr().err


@pytest.mark.parametrize("option", NUMBER_OPTIONS)
@pytest.mark.parametrize("value", NOT_ASCII_DIGITS)
def test_a_number_not_in_ascii_digits_is_refused_in_the_clis_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    argv = ["--hub-db", str(tmp_path / "hub.db"), option, value]
    assert _stopped_by(argv, capsys) == (2, _refusal(option, value))
    assert not (tmp_path / "hub.db").exists()


@pytest.mark.parametrize("value", ["inf", "nan", "1e999"])
def test_a_timeout_of_no_finite_number_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    argv = ["--hub-db", str(tmp_path / "hub.db"), "--header-timeout", value]
    assert _stopped_by(argv, capsys) == (2, _refusal("--header-timeout", value))


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--rate-limit", "-1", "--rate-limit must be 0 or more."),
        ("--port", "70000", "--port must be a port number from 0 to 65535."),
        ("--port", "-1", "--port must be a port number from 0 to 65535."),
        ("--max-connections", "0", "--max-connections and --max-client-connections must be"),
        ("--header-timeout", "0", "--header-timeout must be more than 0 and at most 3600"),
    ],
)
def test_a_number_out_of_range_is_still_told_its_range(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--hub-db", str(tmp_path / "hub.db"), option, value])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.startswith(f"aletheia-sync: {message}")


def test_the_script_refuses_other_digits_and_aletheia_hub_too(tmp_path: Path) -> None:
    env = {**os.environ, "ALETHEIA_DATA_DIR": str(tmp_path / "data")}
    for command, prog in (
        ([sys.executable, "-m", "aletheia_mem.hub.main"], "aletheia-sync"),
        ([sys.executable, "-m", "aletheia_mem", "hub"], "aletheia hub"),
    ):
        result = subprocess.run(
            [*command, "--rate-limit", ARABIC_INDIC_12, "--tls-cert", "none.pem"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
        assert (result.returncode, result.stderr) == (
            2,
            _refusal("--rate-limit", ARABIC_INDIC_12, prog),
        )


def test_numbers_in_ascii_digits_still_start_the_hub(tmp_path: Path) -> None:
    extra = ("--rate-limit", "0", "--max-connections", "064", "--header-timeout", "2.5")
    with running_hub(tmp_path / "hub.db", *extra) as hub:
        assert hub.url.startswith("http://127.0.0.1:")
