"""Every script is one CLI: ``--help`` and ``--version`` everywhere, ``aletheia mcp`` serving
as ``aletheia-mcp`` does, ``python -m aletheia_mem``, and commands loaded only when used."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client

from aletheia_mem import __version__
from aletheia_mem.cli.main import cli

BIN = Path(sys.executable).parent
SCRIPTS = ["aletheia", "aletheia-mem", "aletheia-mcp", "aletheia-server", "aletheia-sync",
           "aletheia-hook"]  # fmt: skip
WAIT = 5.0


def run(
    *argv: str, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), input=stdin, capture_output=True, text=True, timeout=30, env=env, check=False
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_answers_version(script: str) -> None:
    result = run(str(BIN / script), "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f", version {__version__}")


@pytest.mark.parametrize("command", ["mcp", "serve", "hub", "hook"])
def test_every_server_command_answers_version_as_its_script_does(command: str) -> None:
    """The README's aliases: ``aletheia serve`` is ``aletheia-server``, and so on."""
    result = run(str(BIN / "aletheia"), command, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f", version {__version__}")
    assert "--version" in run(str(BIN / "aletheia"), command, "--help").stdout


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_script_answers_help(script: str, flag: str) -> None:
    result = run(str(BIN / script), flag)
    assert result.returncode == 0, result.stderr
    assert result.stdout.lower().startswith("usage: ")
    assert "--version" in result.stdout


@pytest.mark.parametrize("script", ["aletheia-mcp", "aletheia-server", "aletheia-sync"])
def test_every_server_s_help_names_the_semantic_switch_it_reads(script: str) -> None:
    """configuration.md: ALETHEIA_SEMANTIC is read by "the servers and the CLI" (a typo in it
    stops each server), so each server's list of variables names it."""
    result = run(str(BIN / script), "--help")
    assert result.returncode == 0, result.stderr
    assert "ALETHEIA_SEMANTIC" in result.stdout


@pytest.mark.parametrize(
    ("command", "wrong", "message"),
    [
        (["aletheia-server"], ["--prot", "1"], "Unrecognized arguments: --prot 1."),
        (["aletheia-server"], ["--port"], "Argument --port: expected one argument."),
        (["aletheia-sync"], ["--prot", "1"], "Unrecognized arguments: --prot 1."),
        (["aletheia", "hub"], ["--prot", "1"], "Unrecognized arguments: --prot 1."),
    ],
    ids=["server-typo", "server-no-value", "sync-typo", "hub-typo"],
)
def test_a_server_script_tells_a_mistyped_option_in_one_line(
    command: list[str], wrong: list[str], message: str
) -> None:
    result = run(str(BIN / command[0]), *command[1:], *wrong)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"Error: {message} Try '{' '.join(command)} --help'.\n"


def test_the_quick_version_line_is_the_one_click_prints() -> None:
    quick = run(str(BIN / "aletheia"), "--version").stdout
    assert (
        quick
        == CliRunner().invoke(cli, ["--version"]).stdout
        == f"aletheia, version {__version__}\n"
    )


def test_python_dash_m_runs_the_cli() -> None:
    assert run(sys.executable, "-m", "aletheia_mem", "--version").stdout.startswith("aletheia, ")
    helped = run(sys.executable, "-m", "aletheia_mem", "search", "--help")
    assert helped.returncode == 0 and "Search memories and facts" in helped.stdout


def _modules_after(argv: list[str]) -> set[str]:
    """The aletheia_mem.cli modules and click once the CLI has answered ``argv``."""
    probe = (
        "import sys\n"
        "from aletheia_mem.cli.entry import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in sys.modules if m.startswith('aletheia_mem.cli.') or m == 'click']\n"
        "sys.stderr.write('LOADED ' + ' '.join(sorted(loaded)))\n"
    )
    result = run(sys.executable, "-c", probe)
    return set(result.stderr.rsplit("LOADED ", 1)[1].split())


def test_version_loads_neither_click_nor_any_command() -> None:
    assert _modules_after(["--version"]) == {"aletheia_mem.cli.entry"}


def test_a_command_loads_its_own_module_and_not_the_others() -> None:
    loaded = _modules_after(["search", "--help"])
    assert "aletheia_mem.cli.memory_commands" in loaded
    for other in ("doctor", "connect", "install", "transfer", "mcp_link", "sync", "rules"):
        assert f"aletheia_mem.cli.{other}" not in loaded


def test_aletheia_mcp_subcommand_starts_without_click(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from aletheia_mem.cli.entry import main\n"
        "main(['mcp'])\n"
        "sys.stderr.write('CLICK ' + str('click' in sys.modules))\n"
    )
    result = run(sys.executable, "-c", probe, env={"ALETHEIA_DATA_DIR": str(tmp_path / "d")})
    assert result.stderr.endswith("CLICK False")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("argv", [["aletheia", "mcp"], ["aletheia-mem", "mcp"]])
async def test_aletheia_mcp_serves_the_tools_to_the_official_client(
    tmp_path: Path, argv: list[str]
) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "ALETHEIA_CWD": str(project)}
    params = StdioServerParameters(command=str(BIN / argv[0]), args=argv[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        assert len(tools.tools) == 13
        saved = await session.call_tool("save_memory", {"text": "Use pnpm in the shop repo"})
        assert saved.is_error is False
    assert (tmp_path / "data" / "aletheia.db").is_file()


def test_aletheia_mcp_help_describes_the_environment() -> None:
    result = run(str(BIN / "aletheia"), "mcp", "--help")
    assert result.returncode == 0
    assert "ALETHEIA_DATA_DIR" in result.stdout and "aletheia-mcp" in result.stdout


def test_aletheia_hook_runs_the_hook_as_aletheia_hook_does(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
    payload = json.dumps({"session_id": "s1", "cwd": str(project)})
    result = run(str(BIN / "aletheia"), "hook", "session-start", env=env, stdin=payload)
    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["hookSpecificOutput"]["additionalContext"].startswith("<aletheia-memory>")


def _options(help_text: str) -> list[str]:
    """The option names of a click help's Options section, in order."""
    section = help_text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  (-[-\w]+(?:, --[-\w]+)?)", section, flags=re.MULTILINE)


def test_hub_help_is_in_click_s_style_and_lists_every_option_of_aletheia_sync() -> None:
    """aletheia hub runs aletheia-sync's parser, whose --help is argparse's: the command's
    own --help is click's, as every other command's, and lists each of those options."""
    shown = run(str(BIN / "aletheia"), "hub", "--help")
    assert shown.returncode == 0, shown.stderr
    served = run(str(BIN / "aletheia"), "serve", "--help").stdout
    for text, name in ((shown.stdout, "hub"), (served, "serve")):
        assert text.startswith(f"Usage: aletheia {name} [OPTIONS]\n\n  Serve ")
        assert re.search(r"\n  --version +Show the version and exit\.\n", text)
        assert re.search(r"\n  -h, --help +Show this message and exit\.\n", text)
    script = run(str(BIN / "aletheia-sync"), "--help").stdout
    wanted = set(re.findall(r"--[a-z][a-z-]+", script.split("options:", 1)[1]))
    assert wanted - {"--help"} == set(_options(shown.stdout)) - {"-h, --help"}
    assert "usage:" not in shown.stdout and "show this help message" not in shown.stdout
    assert "\n  --rate-limit N  " in shown.stdout
    assert "Requests per minute per token (default 60; 0" in shown.stdout
    assert "  Environment: ALETHEIA_HUB_DB (instead of --hub-db)" in shown.stdout
    assert run(str(BIN / "aletheia"), "hub", "-h").stdout == shown.stdout
