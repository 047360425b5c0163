"""The project key of a working directory (DESIGN section 3)."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.config import load_settings
from aletheia_mem.domain.file_paths import resolved
from aletheia_mem.projects import (
    DEFAULT_PROJECT,
    is_excluded,
    normalize_project,
    project_for_directory,
)
from aletheia_mem.server.wiring import open_app, open_hub_app


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def test_a_folder_inside_a_git_work_tree_belongs_to_the_top_folder(tmp_path):
    home = _home(tmp_path)
    repo = home / "code" / "shop"
    nested = repo / "src" / "checkout"
    nested.mkdir(parents=True)
    (repo / ".git").mkdir()

    assert project_for_directory(nested, home=home) == "shop"
    assert project_for_directory(repo, home=home) == "shop"


def test_a_git_file_marks_a_work_tree_too(tmp_path):
    home = _home(tmp_path)
    worktree = home / "shop-feature"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n", encoding="utf-8")

    assert project_for_directory(worktree / "src", home=home) == "shop-feature"


def test_the_nearest_work_tree_wins(tmp_path):
    home = _home(tmp_path)
    outer = home / "monorepo"
    inner = outer / "vendor" / "billing"
    inner.mkdir(parents=True)
    (outer / ".git").mkdir()
    (inner / ".git").mkdir()

    assert project_for_directory(inner, home=home) == "billing"


def test_outside_a_work_tree_the_folder_names_the_project(tmp_path):
    home = _home(tmp_path)
    folder = home / "notes"
    folder.mkdir()

    assert project_for_directory(folder, home=home) == "notes"


def test_a_folder_name_with_control_or_format_characters_gives_a_key_with_their_escapes(
    tmp_path,
):
    # No store takes a project key holding them (a tool call, import and sync refuse it).
    home = _home(tmp_path)
    folder = home / "Shop\u202eevil\x1b"
    folder.mkdir()

    assert project_for_directory(folder, home=home) == "shop\\u202eevil\\x1b"


def test_the_key_is_lower_case_and_trimmed(tmp_path):
    home = _home(tmp_path)
    repo = home / " My-Shop "
    repo.mkdir()
    (repo / ".git").mkdir()

    assert project_for_directory(repo, home=home) == "my-shop"
    assert normalize_project("  Shop\n") == "shop"


def test_the_key_is_in_nfc_whichever_way_the_folder_or_the_name_spells_it(tmp_path):
    home = _home(tmp_path)
    repo = home / "Cafe\u0301"  # as macOS gives a folder's name: e and a combining accent
    repo.mkdir()

    assert project_for_directory(repo, home=home) == "caf\u00e9"
    assert normalize_project("CAFE\u0301 ") == normalize_project("caf\u00e9") == "caf\u00e9"
    assert is_excluded(repo, "caf\u00e9", ("Cafe\u0301",))
    # lower-casing may undo NFC (Kelvin sign, dotted capital I): the key stays a fixed point
    for name in ("\u212a", "\u0130", "A\u030a", "\u1e9e", "\u01c5"):
        key = normalize_project(name)
        assert normalize_project(key) == key


def test_an_excluded_folder_is_excluded_whichever_way_either_spells_its_name(tmp_path):
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    for on_disk, written in ((composed, decomposed), (decomposed, composed)):
        folder = tmp_path / on_disk / "repo"
        (folder / "src").mkdir(parents=True)
        entry = str(tmp_path / written)
        assert is_excluded(folder, "repo", (entry,)), (on_disk, written)
        assert is_excluded(folder / "src", "repo", (f"{tmp_path / written}/repo",))
        assert not is_excluded(tmp_path, "x", (entry,))


def test_the_home_folder_is_the_default_project(tmp_path):
    home = _home(tmp_path)

    assert project_for_directory(home, home=home) == DEFAULT_PROJECT == "default"


def test_the_filesystem_root_is_the_default_project(tmp_path):
    assert project_for_directory(Path("/"), home=_home(tmp_path)) == "default"


def test_aletheia_cwd_picks_the_default_project_of_the_server(tmp_path):
    repo = tmp_path / "Shop"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    env = {"ALETHEIA_CWD": str(repo / "src"), "ALETHEIA_DATA_DIR": str(tmp_path / "data")}

    app = open_app(load_settings(env))
    try:
        assert app.default_project == "shop"
        assert app.caller == "mcp"
        assert app.store.path == tmp_path / "data" / "aletheia.db"
    finally:
        app.store.close()


def test_aletheia_tool_names_the_caller_and_aletheia_hub_db_names_the_store(tmp_path):
    env = {
        "ALETHEIA_CWD": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "ALETHEIA_HUB_DB": str(tmp_path / "hub" / "hub.db"),
        "ALETHEIA_TOOL": "cursor",
    }

    app = open_app(load_settings(env))
    try:
        assert app.caller == "cursor"
        assert app.store.path == tmp_path / "hub" / "hub.db"
    finally:
        app.store.close()


def test_an_excluded_folder_is_excluded_through_a_symbolic_link_and_the_other_way(tmp_path):
    real = tmp_path / "proj" / "secretrepo"
    (real / "sub").mkdir(parents=True)
    alias = tmp_path / "proj" / "alias"
    alias.symlink_to(real)

    assert is_excluded(alias, "alias", (str(real),))
    assert is_excluded(alias / "sub", "alias", (str(real),))
    assert is_excluded(real / "sub", "secretrepo", (str(alias),))
    assert not is_excluded(tmp_path / "proj", "proj", (str(alias),))


def test_a_symbolic_link_loop_is_compared_as_written(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert is_excluded(loop, "loop", (str(loop),))
    assert not is_excluded(tmp_path, "x", (str(loop),))


def test_a_folder_name_past_the_project_limit_makes_a_key_at_the_limit(tmp_path):
    folder = tmp_path / ("n" * 250)
    folder.mkdir()
    assert project_for_directory(folder) == "n" * 200


def test_aletheia_tool_is_one_line_of_at_most_100_characters(tmp_path):
    assert load_settings({"ALETHEIA_TOOL": "  my\ttool \n"}).tool == "my tool"
    assert load_settings({"ALETHEIA_TOOL": "t" * 300}).tool == "t" * 100
    assert load_settings({"ALETHEIA_TOOL": "   "}).tool is None


def test_a_local_server_knows_its_repository_and_a_hub_none(tmp_path):
    repo = tmp_path / "Shop"
    (repo / "src").mkdir(parents=True)
    (repo / ".git").mkdir()
    env = {"ALETHEIA_CWD": str(repo / "src"), "ALETHEIA_DATA_DIR": str(tmp_path / "data")}

    local = open_app(load_settings(env))
    hub = open_hub_app(load_settings(env), tmp_path / "hub.db")
    try:
        found = resolved(local.repository)  # its folder until a file search needs it
        assert found is not None
        assert found.project == "shop"
        assert str(repo.resolve()) in found.folders
        assert hub.repository is None
    finally:
        local.store.close()
        hub.store.close()
