"""Sentence vectors of memories, for the optional semantic extra. No numpy here: vectors are bytes.

The embedding worker runs in a background thread with its own connections (one per thread), so it
never shares a transaction with a tool call. Writes are short ``BEGIN IMMEDIATE`` transactions.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from aletheia_mem.storage.connections import ThreadConnections


@dataclass(frozen=True)
class PendingMemory:
    """A live memory whose vector is missing or older than its text."""

    id: int
    updated_at: int
    title: str
    text: str
    narrative: str | None


@dataclass(frozen=True)
class StoredVector:
    seq: int
    memory_id: int
    project: str
    vector: bytes


class VectorStore:
    """The ``memory_vectors`` table and the embedding lease, over the store's SQLite file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pool = ThreadConnections(path)

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._pool.get()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._pool.write()

    def close(self) -> None:
        self._pool.close()

    def newest_memory_id(self) -> int:
        row = self._conn.execute("SELECT max(id) FROM memories").fetchone()
        return int(row[0] or 0)

    def pending(self, model: str, limit: int, after_id: int = 0) -> list[PendingMemory]:
        """Live memories past ``after_id`` without a current vector from ``model``, oldest first.

        Driven by the narrow ``memory_rank`` table, so a full pass over a large store stays cheap.
        """
        rows = self._conn.execute(
            "SELECT m.id, m.updated_at, m.title, m.text, m.narrative FROM memories m WHERE m.id IN"
            " (SELECT r.id FROM memory_rank r LEFT JOIN memory_vectors v ON v.memory_id = r.id"
            "  WHERE r.id > ? AND r.dismissed_at IS NULL AND (v.memory_id IS NULL"
            "  OR v.model != ? OR v.memory_updated_at != r.updated_at) ORDER BY r.id LIMIT ?)"
            " ORDER BY m.id",
            (after_id, model, limit),
        ).fetchall()
        return [PendingMemory(*row) for row in rows]

    def put(self, model: str, vectors: Sequence[tuple[PendingMemory, bytes]]) -> None:
        """Store (or replace) the vectors of these memories in one transaction."""
        with self._write() as conn:
            # Delete then insert, so that a replaced vector gets a new seq and readers see it.
            conn.executemany(
                "DELETE FROM memory_vectors WHERE memory_id = ?",
                [(memory.id,) for memory, _ in vectors],
            )
            conn.executemany(
                "INSERT INTO memory_vectors (memory_id, model, memory_updated_at, vector)"
                " VALUES (?, ?, ?, ?)",
                [(memory.id, model, memory.updated_at, blob) for memory, blob in vectors],
            )

    def vectors_since(self, model: str, seq: int, limit: int) -> list[StoredVector]:
        """Vectors of ``model`` written after ``seq``, in write order, with their project."""
        rows = self._conn.execute(
            "SELECT v.seq, v.memory_id, m.project, v.vector FROM memory_vectors v"
            " JOIN memories m ON m.id = v.memory_id WHERE v.seq > ? AND v.model = ?"
            " ORDER BY v.seq LIMIT ?",
            (seq, model, limit),
        ).fetchall()
        return [StoredVector(*row) for row in rows]

    def coverage(self, model: str) -> tuple[int, int]:
        """(live memories with a current vector from ``model``, live memories)."""
        embedded, live = self._conn.execute(
            "SELECT count(v.memory_id), count(*) FROM memory_rank r LEFT JOIN memory_vectors v"
            " ON v.memory_id = r.id AND v.model = ? AND v.memory_updated_at = r.updated_at"
            " WHERE r.dismissed_at IS NULL",
            (model,),
        ).fetchone()
        return int(embedded), int(live)

    def last_seq(self) -> int:
        row = self._conn.execute("SELECT max(seq) FROM memory_vectors").fetchone()
        return int(row[0] or 0)

    def take_lease(self, model: str, holder: str, now: int, ttl_ms: int) -> bool:
        """Become (or stay) the one embedder of ``model`` until ``now + ttl_ms``.

        A compare-and-swap: it succeeds when nobody holds the lease, the lease expired, or
        ``holder`` already has it.
        """
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO embedding_lease (model, holder, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (model) DO UPDATE SET holder = excluded.holder,"
                " expires_at = excluded.expires_at"
                " WHERE embedding_lease.holder = excluded.holder OR embedding_lease.expires_at < ?",
                (model, holder, now + ttl_ms, now),
            )
            return cursor.rowcount > 0

    def release_lease(self, model: str, holder: str) -> None:
        with self._write() as conn:
            conn.execute(
                "DELETE FROM embedding_lease WHERE model = ? AND holder = ?", (model, holder)
            )
