"""Settings: the only reader of ``ALETHEIA_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DB_FILE_NAME = "aletheia.db"


@dataclass(frozen=True)
class Settings:
    """What the process was configured with, read once at start."""

    db_path: Path
    tool: str | None
    cwd: Path
    api_key: str | None


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read settings from the environment (``os.environ`` by default)."""
    env = os.environ if env is None else env
    hub_db = env.get("ALETHEIA_HUB_DB", "").strip()
    if hub_db:
        db_path = Path(hub_db).expanduser()
    else:
        data_dir = env.get("ALETHEIA_DATA_DIR", "").strip() or "~/.aletheia"
        db_path = Path(data_dir).expanduser() / DB_FILE_NAME
    cwd = env.get("ALETHEIA_CWD", "").strip()
    return Settings(
        db_path=db_path,
        tool=env.get("ALETHEIA_TOOL", "").strip() or None,
        cwd=Path(cwd).expanduser() if cwd else Path.cwd(),
        api_key=env.get("ALETHEIA_API_KEY") or None,
    )
