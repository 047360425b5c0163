"""DESIGN section 3, round 4: a project key comes from the git work tree's top folder, else the
folder's own name, and is ``default`` only where neither gives a name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aletheia_mem.projects import project_for_directory
from tests.cli.test_design_round4 import aletheia


@pytest.fixture
def dotfiles_home(tmp_path: Path) -> Path:
    """A home folder that is itself a git work tree (a dotfiles repository)."""
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    (home / "notes" / "deep").mkdir(parents=True)
    (home / "code" / "shop" / ".git").mkdir(parents=True)
    (home / "code" / "shop" / "src").mkdir()
    return home


def test_a_folder_in_a_home_folder_work_tree_is_named_by_itself(dotfiles_home: Path) -> None:
    home = dotfiles_home
    assert project_for_directory(home / "notes" / "deep", home=home) == "deep"
    assert project_for_directory(home / "notes", home=home) == "notes"
    assert project_for_directory(home, home=home) == "default"
    assert project_for_directory(home / "code" / "shop" / "src", home=home) == "shop"


@pytest.mark.parametrize(
    ("where", "project"),
    [("notes/deep", "deep"), (".", "default"), ("code/shop/src", "shop")],
)
def test_saving_from_a_dotfiles_home_subfolder_files_it_under_that_folder(
    dotfiles_home: Path, tmp_path: Path, where: str, project: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(
        HOME=str(dotfiles_home),
        ALETHEIA_DATA_DIR=str(tmp_path / "data"),
        ALETHEIA_CWD=str(dotfiles_home / where),
        NO_COLOR="1",
    )
    saved = aletheia("save", f"Saved from {where}", cwd=tmp_path, env=env)
    assert saved.returncode == 0, saved.stderr
    assert saved.stdout == f"Saved as #1 in {project}.\n"
