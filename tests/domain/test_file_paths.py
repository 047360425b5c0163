"""The spellings a file search tries: absolute and relative to the repository's top."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.domain.file_paths import PathForm, RepositoryRoot, path_forms, repository_root

SHOP = RepositoryRoot(folders=("/home/me/shop", "/data/shop"), project="shop")
WINDOWS = RepositoryRoot(folders=("C:/Users/me/shop",), project="shop")


def test_an_absolute_path_in_the_repository_is_also_relative_in_its_project_only():
    assert path_forms("/home/me/shop/src/auth.py", SHOP, None) == [
        PathForm("/home/me/shop/src/auth.py", None),
        PathForm("src/auth.py", ("shop",)),
    ]
    assert path_forms("/data/shop/src/../lib/a.py", SHOP, ("shop", "billing"))[1] == PathForm(
        "lib/a.py", ("shop",)
    )


def test_a_relative_path_is_also_absolute_under_each_form_of_the_top():
    assert path_forms("./src/auth.py", SHOP, ("shop",)) == [
        PathForm("./src/auth.py", ("shop",)),
        PathForm("/home/me/shop/src/auth.py", ("shop",)),
        PathForm("/data/shop/src/auth.py", ("shop",)),
    ]


@pytest.mark.parametrize(
    "path",
    ["/home/me/shop-old/src/a.py", "/home/me/shop", "/home/me/shop/../billing/a.py", "../a.py"],
)
def test_a_path_that_leaves_the_repository_is_only_itself(path):
    assert path_forms(path, SHOP, None) == [PathForm(path, None)]


def test_an_absolute_path_is_not_made_relative_for_another_projects_search():
    assert path_forms("/home/me/shop/a.py", SHOP, ("billing",)) == [
        PathForm("/home/me/shop/a.py", ("billing",))
    ]


def test_a_windows_path_is_read_with_either_separator():
    assert path_forms("C:\\Users\\me\\shop\\src\\auth.py", WINDOWS, None)[1] == PathForm(
        "src/auth.py", ("shop",)
    )


def test_without_a_repository_the_path_is_only_itself():
    assert path_forms("/home/me/shop/a.py", None, None) == [PathForm("/home/me/shop/a.py", None)]


def test_a_server_in_a_work_tree_works_in_its_top_folder(tmp_path):
    repo = tmp_path / "Shop"
    (repo / ".git").mkdir(parents=True)

    found = repository_root(repo / "src")

    assert found is not None
    assert found.project == "shop"
    assert found.folders[0] == repo.as_posix()
    assert repo.resolve().as_posix() in found.folders


def test_the_filesystem_root_names_no_repository():
    assert repository_root(Path("/")) is None
