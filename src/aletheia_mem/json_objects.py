"""JSON objects whose every key is given once: a repeated key (two ``store_id`` in a sync body,
two ``id`` in an import's line, two ``text`` in a tool's arguments) would mean what the last
says to us and maybe the first to another reader (a proxy, a log, another JSON library), so
``/mcp``, ``/api/``, ``/sync/`` and ``aletheia import`` refuse it
(``json.JSONDecoder(object_pairs_hook=once)``)."""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing`` costs the stdio server's start a millisecond
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


class RepeatedKeyError(ValueError):
    """An object gives a key twice; ``names``: its keys, each as often as it gives it."""

    def __init__(self, names: list[str]) -> None:
        super().__init__("a key given twice")
        self.names = names

    @property
    def key(self) -> str:
        """The first key the object gives twice."""
        return repeated_names(self.names)[0]


def repeated_names(names: Iterable[str]) -> list[str]:
    """The names ``names`` gives more than once, each once, in the order they first come."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return [name for name, count in counts.items() if count > 1]


def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON decoder's ``object_pairs_hook``: the object, each of whose keys is given once.

    Raises:
        RepeatedKeyError: a key is given twice.
    """
    value = dict(pairs)
    if len(value) != len(pairs):
        raise RepeatedKeyError([name for name, _ in pairs])
    return value
