"""A fact key's timeline as sync leaves it: no two values valid at one instant, on every store.

``put_fact`` splits the interval a new value's ``valid_from`` falls in. Facts that come from
peers (in any order, any of them backdated) are placed the same way by ranking the key's facts
by ``(valid_from, recorded_at, uid)`` and ending each where the next one starts: the later write
wins a shared ``valid_from``, as with ``put_fact``. The tiling is a function of the key's set of
facts alone, so stores that hold the same facts hold the same timeline, whatever the order the
facts came in; the ``valid_to`` and ``superseded_by`` a record carries are only its sender's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aletheia_mem.storage.sync_dialect import SyncConn

FactKey = tuple[str, str, str]  # project, subject_key, predicate_key
Tile = tuple[int | None, str | None]  # valid_to, the successor's uid


def fact_rank(valid_from: int, recorded_at: int, uid: str) -> tuple[int, int, str]:
    """Of two facts of one key, the one ranked higher comes later in the timeline."""
    return (valid_from, recorded_at, uid)


def retile_key(conn: SyncConn, key: FactKey) -> dict[str, Tile]:
    """End each fact of ``key`` where the next one starts; returns the tile each fact it
    changed held before."""
    rows = conn.execute(
        "SELECT f.id, f.uid, f.valid_from, f.recorded_at, f.valid_to, s.uid AS successor"
        " FROM facts f LEFT JOIN facts s ON s.id = f.superseded_by"
        " WHERE f.project = ? AND f.subject_key = ? AND f.predicate_key = ?",
        key,
    ).fetchall()
    if not rows:  # every fact left the key (a peer's version of each names another subject)
        return {}
    ranked = sorted(rows, key=lambda r: fact_rank(r["valid_from"], r["recorded_at"], r["uid"]))
    ids = {row["uid"]: int(row["id"]) for row in ranked}
    before: dict[str, Tile] = {}
    after: dict[str, Tile] = {}
    for row, successor in zip(ranked, [*ranked[1:], None], strict=True):
        tile = (None, None) if successor is None else (successor["valid_from"], successor["uid"])
        if tile != (row["valid_to"], row["successor"]):
            before[row["uid"]] = (row["valid_to"], row["successor"])
            after[row["uid"]] = tile
    # Closed ones first: the unique index allows one open fact per key.
    for closing in (True, False):
        for uid, (valid_to, successor_uid) in after.items():
            if (valid_to is not None) == closing:
                conn.execute(
                    "UPDATE facts SET valid_to = ?, superseded_by = ? WHERE id = ?",
                    (valid_to, None if successor_uid is None else ids[successor_uid], ids[uid]),
                )
    if after:  # a successor a peer named is no longer awaited: the tiling names its own
        conn.execute(
            "DELETE FROM sync_pending WHERE kind = 'fact' AND field = 'superseded_by' AND key IN"
            " (SELECT uid FROM facts WHERE project = ? AND subject_key = ? AND predicate_key = ?)",
            key,
        )
    return before


@dataclass
class PageTimelines:
    """The facts one page re-tiled: the tile each held before the page, the one each record
    of the page carried. Those that end with another tile get a version of the receiver's own,
    so that the change travels on; a page's own view of its facts needs none."""

    before: dict[str, Tile] = field(default_factory=dict)
    received: dict[str, Tile] = field(default_factory=dict)
    keys: set[FactKey] = field(default_factory=set)  # to tile once the page is in

    def note(self, changed: dict[str, Tile]) -> None:
        for uid, tile in changed.items():
            self.before.setdefault(uid, tile)

    def receive(self, uid: str, tile: Tile) -> None:
        self.received[uid] = tile

    def changed(self, conn: SyncConn) -> list[str]:
        """The facts whose tile now differs from the one received, else from the one before."""
        found = []
        for uid in sorted({*self.before, *self.received}):
            row = conn.execute(
                "SELECT f.valid_to, s.uid FROM facts f LEFT JOIN facts s ON s.id = f.superseded_by"
                " WHERE f.uid = ?",
                (uid,),
            ).fetchone()
            expected = self.received.get(uid, self.before.get(uid))
            if row is not None and (row[0], row[1]) != expected:
                found.append(uid)
        return found
