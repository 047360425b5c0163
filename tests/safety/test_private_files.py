"""Files only their owner can read, whatever the umask; no write through a planted symlink;
the hub token never on the command line or in the store."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub
from tests.safety.entry_points import BIN, WAIT_SECONDS, mcp_lines, run_command, user_env


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_the_data_folder_is_0700_and_the_store_wal_and_shm_0600_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    home = tmp_path / "home"
    data = home / ".aletheia"
    server = subprocess.Popen(
        [str(BIN / "aletheia-mcp")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=user_env(home),
        preexec_fn=lambda: os.umask(umask),
    )
    try:
        assert server.stdin is not None and server.stdout is not None
        call = {"name": "save_memory", "arguments": {"text": "Deploys go through the VPN"}}
        server.stdin.write(mcp_lines(call))
        server.stdin.flush()
        replies = [json.loads(server.stdout.readline()) for _ in range(2)]
        assert replies[1]["result"]["isError"] is False
        # The server still holds the store open: its WAL and shared-memory files exist.
        assert _mode(data) == 0o700
        for name in ("aletheia.db", "aletheia.db-wal", "aletheia.db-shm"):
            assert _mode(data / name) == 0o600, name
    finally:
        server.communicate(timeout=WAIT_SECONDS)
    assert sorted(path.name for path in data.iterdir()) == ["aletheia.db"]


def test_a_store_left_world_readable_by_an_older_version_is_made_0600(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_command(home, "aletheia", "save", "first note").returncode == 0
    store = home / ".aletheia" / "aletheia.db"
    store.chmod(0o644)
    assert run_command(home, "aletheia", "search", "note").returncode == 0
    assert _mode(store) == 0o600


def test_a_hub_store_made_by_mcp_link_is_0600(tmp_path: Path) -> None:
    hub_db = tmp_path / "hub" / "hub.db"
    made = run_command(
        tmp_path, "aletheia", "mcp-link", "create", "--hub-db", str(hub_db), "--projects", "*",
        umask=0o022,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert _mode(hub_db) == 0o600
    assert _mode(hub_db.parent) == 0o700


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_the_data_folder_made_first_by_mcp_link_create_is_0700_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    home = tmp_path / "home"
    data = home / ".aletheia"  # not there yet: making the hub store makes it
    made = run_command(home, "aletheia", "mcp-link", "create", "--projects", "*", umask=umask)
    assert made.returncode == 0, made.stderr
    assert (_mode(data), _mode(data / "hub"), _mode(data / "hub" / "hub.db")) == (
        0o700,
        0o700,
        0o600,
    )


def test_an_export_is_0600_and_a_symlink_planted_at_its_temporary_path_is_not_followed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    assert run_command(home, "aletheia", "save", "Use pnpm, not npm").returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    out = home / "backup.jsonl"
    for planted in (".backup.jsonl.partial", ".backup.jsonl.tmp", ".backup.jsonl.new"):
        (home / planted).symlink_to(victim)
    result = run_command(home, "aletheia", "export", "-o", str(out), umask=0o022)
    assert result.returncode == 0, result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert _mode(out) == 0o600
    assert '"Use pnpm, not npm"' in out.read_text(encoding="utf-8")
    leftovers = {p.name for p in home.iterdir()} - {".aletheia", "backup.jsonl"}
    assert leftovers == {".backup.jsonl.partial", ".backup.jsonl.tmp", ".backup.jsonl.new"}


def _repository(home: Path) -> Path:
    repo = home / "code" / "shop"
    (repo / ".git").mkdir(parents=True)
    added = run_command(repo, "aletheia", "rules", "add", "Run the tests before you commit")
    assert added.returncode == 0, added.stderr
    return repo


@pytest.mark.parametrize("dry_run", [True, False])
def test_rules_sync_refuses_an_agents_md_that_links_to_the_home_bashrc(
    tmp_path: Path, dry_run: bool
) -> None:
    home = tmp_path / "home"
    repo = _repository(home)
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$HOME/bin:$PATH\n", encoding="utf-8")
    (repo / "AGENTS.md").symlink_to(bashrc)
    args = ["rules", "sync", "--tool", "codex", *(["--dry-run"] if dry_run else [])]
    result = run_command(repo, "aletheia", *args, HOME=str(home))
    assert result.returncode == 5
    assert result.stderr == (
        f"Error: {repo / 'AGENTS.md'} is a link to {bashrc}, outside {repo}; nothing was"
        " written through it. Remove the link, or change that file yourself.\n"
    )
    assert bashrc.read_text(encoding="utf-8") == "export PATH=$HOME/bin:$PATH\n"


def test_rules_sync_dry_run_shows_the_real_target_of_a_link_inside_the_repository(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    repo = _repository(home)
    (repo / "docs").mkdir()
    (repo / "AGENTS.md").symlink_to("docs/agents.md")
    shown = run_command(repo, "aletheia", "rules", "sync", "--tool", "codex", "--dry-run")
    real = repo / "docs" / "agents.md"
    assert shown.stdout.startswith(f"{repo / 'AGENTS.md'} -> {real}: would change:\n")
    assert f"+++ {real} (after)" in shown.stdout
    written = run_command(repo, "aletheia", "rules", "sync", "--tool", "codex")
    assert written.returncode == 0, written.stderr
    assert (repo / "AGENTS.md").is_symlink()
    assert "Run the tests before you commit" in real.read_text(encoding="utf-8")


def test_install_refuses_a_config_that_links_outside_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    outside = tmp_path / "etc-shadow"
    outside.write_text("{}", encoding="utf-8")
    (home / ".claude.json").symlink_to(outside)
    for args in (("install", "claude-code"), ("install", "claude-code", "--write")):
        result = run_command(home, "aletheia", *args)
        assert result.returncode == 1
        assert f"is a link to {outside}, outside {home}; nothing was written" in result.stderr
    assert outside.read_text(encoding="utf-8") == "{}"


def test_install_updates_the_file_a_symlinked_config_points_to(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dotfiles = home / "dotfiles"
    dotfiles.mkdir(parents=True)
    real = dotfiles / "claude.json"
    real.write_text('{"theme": "dark"}\n', encoding="utf-8")
    real.chmod(0o644)
    (home / ".claude.json").symlink_to(real)
    dry = run_command(home, "aletheia", "install", "claude-code")
    assert f"Would add the aletheia entry in {real}:" in dry.stdout
    result = run_command(home, "aletheia", "install", "claude-code", "--write")
    assert result.returncode == 0, result.stderr
    assert (home / ".claude.json").is_symlink()
    config = json.loads(real.read_text(encoding="utf-8"))
    assert config["theme"] == "dark"
    assert "aletheia" in config["mcpServers"]
    (backup,) = dotfiles.glob("claude.json.aletheia-backup-*")
    assert backup.read_text(encoding="utf-8") == '{"theme": "dark"}\n'
    assert _mode(backup) == 0o600


def _hub_token_file(home: Path) -> Path:
    return home / ".aletheia" / "hub-token"


def _stored_tokens(home: Path) -> list[str]:
    conn = sqlite3.connect(home / ".aletheia" / "aletheia.db")
    try:
        return [row[0] for row in conn.execute("SELECT token FROM sync_remote")]
    finally:
        conn.close()


@pytest.mark.e2e
def test_the_hub_token_comes_from_the_environment_or_stdin_and_is_kept_0600_outside_the_store(
    tmp_path: Path,
) -> None:
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        by_env, by_stdin = tmp_path / "env-user", tmp_path / "stdin-user"
        first = run_command(by_env, "aletheia", "sync", "--hub", hub.url, ALETHEIA_HUB_TOKEN=token)
        assert first.returncode == 0, first.stderr
        second = run_command(
            by_stdin, "aletheia", "sync", "--hub", hub.url, "--token-stdin", stdin=token + "\n"
        )
        assert second.returncode == 0, second.stderr
        for home in (by_env, by_stdin):
            assert _hub_token_file(home).read_text(encoding="utf-8") == token + "\n"
            assert _mode(_hub_token_file(home)) == 0o600
            assert _stored_tokens(home) == [""]
            again = run_command(home, "aletheia", "sync")  # remembered: no token given
            assert again.returncode == 0, again.stderr


def test_a_hub_token_an_older_version_kept_in_the_store_moves_to_a_0600_file(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    assert run_command(home, "aletheia", "save", "first note").returncode == 0
    conn = sqlite3.connect(home / ".aletheia" / "aletheia.db")
    conn.execute(
        "INSERT INTO sync_remote (id, url, token, ca_file) VALUES"
        " (1, 'https://hub.example', 'alt_sync_secret', NULL)"
    )
    conn.commit()
    conn.close()
    assert run_command(home, "aletheia", "search", "note").returncode == 0
    assert _stored_tokens(home) == [""]
    assert _hub_token_file(home).read_text(encoding="utf-8") == "alt_sync_secret\n"
    assert _mode(_hub_token_file(home)) == 0o600
    assert b"alt_sync_secret" not in (home / ".aletheia" / "aletheia.db").read_bytes()


def test_doctor_warns_about_a_data_folder_others_can_enter(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_command(home, "aletheia", "save", "first note").returncode == 0
    data = home / ".aletheia"
    assert "warning" not in run_command(home, "aletheia", "doctor").stdout
    data.chmod(0o755)
    report = run_command(home, "aletheia", "doctor")
    assert f"warning: {data} is 0755; others may read it" in report.stdout
