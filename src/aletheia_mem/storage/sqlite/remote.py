"""The hub a local store remembers for ``aletheia sync`` (local SQLite only): its URL in the
store, its token in a 0600 file beside it."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.storage.files import write_private_text
from aletheia_mem.storage.sqlite.database import SECURE_DELETE, SqliteDatabase

HUB_TOKEN_FILE = "hub-token"  # noqa: S105 - a file name


class SqliteRemote(SqliteDatabase):
    """The hub a local store syncs with when none is named (local only)."""

    @property
    def hub_token_path(self) -> Path:
        """Where the remembered hub's token is kept: a 0600 file beside the store, never in it."""
        return self.path.with_name(HUB_TOKEN_FILE)

    def remembered_hub(self) -> tuple[str, str, str | None] | None:
        """The hub ``aletheia sync`` uses when none is named: ``(url, token, ca_file)``; the
        token is empty when its file is gone."""
        row = self._conn.execute("SELECT url, ca_file FROM sync_remote").fetchone()
        if row is None:
            return None
        try:
            # a damaged file's bytes read as U+FFFD: ``aletheia sync`` refuses that token
            token = self.hub_token_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            token = ""
        return row[0], token, row[1]

    def remember_hub(self, url: str, token: str, ca_file: str | None) -> None:
        write_private_text(self.hub_token_path, token + "\n")
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO sync_remote (id, url, token, ca_file) VALUES (1, ?, '', ?)",
                (url, ca_file),
            )

    def _move_hub_token_out(self) -> None:
        """A token that an older version kept in the store goes to its file."""
        row = self._conn.execute("SELECT token FROM sync_remote WHERE token != ''").fetchone()
        if row is not None:
            write_private_text(self.hub_token_path, str(row[0]) + "\n")
            self._conn.execute("PRAGMA secure_delete = ON")  # the old bytes zeroed, not freed
            with self._write() as conn:
                conn.execute("UPDATE sync_remote SET token = ''")
            self._conn.execute(f"PRAGMA secure_delete = {SECURE_DELETE}")

    def _on_open(self) -> None:
        super()._on_open()
        self._move_hub_token_out()
