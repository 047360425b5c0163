"""Ids are ASCII digits for a real MCP client over stdio and for the ``aletheia`` CLI.

``int`` reads a full-width "1" (U+FF11), an Arabic-Indic "3" (U+0663) and "1_0" as numbers:
``dismiss_memory`` with ``id: "\\u0663"`` dismissed #3, ``aletheia dismiss 1_0`` #10. Each is
refused now with the error a word gets, and changes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

pytestmark = pytest.mark.e2e
BIN = Path(sys.executable).parent
OTHER_DIGITS = ["\uff11", "\u0663", "1_0"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_mcp_client_sending_other_digits_as_an_id_changes_nothing(tmp_path: Path) -> None:
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "ALETHEIA_CWD": str(tmp_path)}
    params = StdioServerParameters(command=str(BIN / "aletheia-mcp"), env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(name: str, **arguments: object) -> tuple[str, bool]:
            result = await session.call_tool(name, arguments)
            block = result.content[0]
            assert isinstance(block, TextContent)
            return block.text, result.is_error

        for number in range(1, 11):
            await call("save_memory", text=f"Deploy note number {number}")
        for value in OTHER_DIGITS:
            assert await call("dismiss_memory", id=value) == ("id must be a number.", True)
            assert await call("timeline", anchor=value) == ("anchor must be a number.", True)
            fetched = await call("get_observations", ids=value)
            assert fetched == ("each of ids must be a number.", True)
        shown, error = await call("get_observations", ids="1,3,10")
        assert not error and "[dismissed" not in shown
        assert (await call("dismiss_memory", id="#3"))[0].startswith("Dismissed memory #3.")


def _aletheia(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "ALETHEIA_DATA_DIR": str(home / "data")}
    return subprocess.run(
        [str(BIN / "aletheia"), *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("value", [*OTHER_DIGITS, " 3", "+3"])
def test_the_cli_refuses_an_id_that_is_not_ascii_digits(tmp_path: Path, value: str) -> None:
    for number in range(1, 11):
        assert _aletheia(tmp_path, "save", f"Deploy note number {number}").returncode == 0
    for command in (["dismiss", value], ["restore", value], ["show", value], ["timeline", value]):
        refused = _aletheia(tmp_path, *command)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        assert f"{value!r} is not a valid id." in refused.stderr
    shown = _aletheia(tmp_path, "show", "1", "3", "10")
    assert shown.returncode == 0 and "dismissed" not in shown.stdout.lower()


COUNTS = [
    ["search", "deploy", "--limit"],
    ["search", "deploy", "--offset"],
    ["timeline", "1", "--before"],
    ["timeline", "1", "--after"],
    ["lists", "list", "--limit"],
    ["audit", "--local", "--limit"],
    ["sync", "--page-size"],
]


@pytest.mark.parametrize("value", [*OTHER_DIGITS, "\uff11\uff10", " 3", "3 "])
def test_the_cli_refuses_a_count_that_is_not_ascii_digits(tmp_path: Path, value: str) -> None:
    """``--limit`` and the other counts were read by ``int``: ``--offset \\uff11\\uff10``
    paged to the 11th match."""
    assert _aletheia(tmp_path, "save", "Deploy note number 1").returncode == 0
    for command in COUNTS:
        refused = _aletheia(tmp_path, *command, value)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        flag = command[-1]
        assert f"Invalid value for '{flag}'" in refused.stderr
        assert f"{value!r} is not a whole number in the digits 0-9." in refused.stderr
    assert _aletheia(tmp_path, "search", "deploy", "--limit", "1").returncode == 0
    out_of_range = _aletheia(tmp_path, "timeline", "1", "--before", "-1")
    assert "-1 is not in the range 0<=x<=50." in out_of_range.stderr
