"""Reading Codex's apply_patch text, and the observations a patch makes, in process."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.domain.patches import (
    MAX_CHANGE_TEXT,
    MAX_PATCH_FILES,
    PATCH_READ_LIMIT,
    patch_observations,
    read_patch,
)


def test_each_section_is_read_with_its_action_lines_and_first_hunk() -> None:
    patch = (
        "*** Begin Patch\n"
        "*** Add File: a.md\n+one\n+two\n"
        "*** Update File: b.py\n"
        "\n"  # a blank line before the first hunk opens none
        " keep\n-old\n+new\n"
        "@@ later\n-x\n+y\n"
        "*** End of File\n"
        "*** Delete File: c.txt\nstray\n"
        "*** Update File: d.py\n*** Move to: e.py\n*** Move to: f.py\n"
        "*** End Patch"
    )
    add, update, delete, move = read_patch(patch)
    assert (add.action, add.path, add.added_lines) == ("add", "a.md", 2)
    assert (update.action, update.hunks, update.old, update.new) == (
        "update",
        2,
        ["keep", "old"],
        ["keep", "new"],
    )
    assert (delete.action, delete.path) == ("delete", "c.txt")
    assert (move.path, move.moved_to, move.hunks) == ("d.py", "e.py", 0)


def test_text_that_is_no_patch_names_no_file() -> None:
    assert read_patch("") == []
    assert read_patch("*** Update File:   \n-a\n+b\n") == []
    assert read_patch("rm -rf build\n-a\n+b") == []


def test_a_long_patch_is_read_up_to_its_limits() -> None:
    many = "".join(f"*** Delete File: f{n}.txt\n" for n in range(MAX_PATCH_FILES + 5))
    assert len(read_patch(many)) == MAX_PATCH_FILES
    long_line = "x" * 1000
    body = "".join(f"-{long_line}\n+{long_line}\n" for _ in range(100))
    [change] = read_patch(f"*** Update File: big.py\n@@\n{body}")
    assert MAX_CHANGE_TEXT <= sum(len(line) + 1 for line in change.old) < MAX_CHANGE_TEXT + 1002


def test_paths_that_cannot_be_kept_or_are_excluded_make_no_observation(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    (root / "vendor" / "lib").mkdir(parents=True)
    patch = (
        "*** Add File: bad\x00name\n+x\n"
        f"*** Add File: {'y' * 1001}\n+x\n"
        f"*** Delete File: {root}/vendor/lib/gone.py\n"
        "*** Update File: ../cart.py\n@@\n-a\n+b\n"
    )
    found = patch_observations({"command": patch}, root, root / "src", (str(root / "vendor"),))
    assert [(o.title, o.files) for o in found] == [("Edited cart.py", ("cart.py",))]
    assert patch_observations({"command": 7}, root, root) == []
    assert patch_observations("*** Delete File: x", root, root) == []


def test_a_patch_of_megabytes_is_read_to_its_limit_without_the_path_the_cut_falls_in(
    tmp_path: Path,
) -> None:
    # The cut falls inside the second section's path line: reading it would name another file.
    first = "*** Add File: notes.md\n" + "+note\n" * 10
    filler = "+" + "x" * (PATCH_READ_LIMIT - len(first) - 40) + "\n"
    patch = first + filler + "*** Update File: src/checkout_and_payment_flow.py\n@@\n-a\n+b\n"
    found = patch_observations({"command": patch}, tmp_path, tmp_path)
    assert [o.title for o in found] == ["Wrote notes.md"]
