"""The full-text reindex steps a migration may leave owed (``full_text_reindex``), on either store,
and which rows each indexes again: those whose text its test finds.

- ``cjk_bigrams`` (SQLite 0019 and 0020, PostgreSQL 0016 and 0017): CJK text (``search.cjk``:
  its bigrams, with a break before each run's);
- ``id_parts`` (SQLite 0021, PostgreSQL 0018): a made-up id whose letter runs were indexed as
  words (``search.text.holds_id_parts``: ``aaeb`` of a hash);
- ``name_parts`` (SQLite 0022, PostgreSQL 0019): a name with digits whose words 0021's release
  took for a made-up id's and did not index (``search.text.holds_name_parts``: ``Password`` of
  ``1Password``).
"""

from __future__ import annotations

from collections.abc import Callable

from aletheia_mem.search.cjk import has_cjk
from aletheia_mem.search.text import holds_id_parts, holds_name_parts

CJK_STEP = "cjk_bigrams"
ID_PARTS_STEP = "id_parts"
NAME_PARTS_STEP = "name_parts"
STEPS: dict[str, Callable[[str], bool]] = {
    CJK_STEP: has_cjk,
    ID_PARTS_STEP: holds_id_parts,
    NAME_PARTS_STEP: holds_name_parts,
}


def known_steps(owed: set[str]) -> list[str]:
    """The known steps of ``owed``, in ``STEPS``' order."""
    return [step for step in STEPS if step in owed]
