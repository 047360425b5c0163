"""Whether this Aletheia runs from a run-once cache (``uvx``, ``pipx run``) or a stable install.

A host's entry that names ``~/.cache/uv/archive-v0/<id>/bin/python`` breaks at the next
``uv cache clean`` (``pipx run`` expires its cached environments after 14 days), so from such a
cache ``connect`` and ``install`` write ``uvx aletheia-mem mcp`` or
``pipx run --spec aletheia-mem aletheia-mem mcp`` instead of absolute paths.

Layouts (uv's and pipx's documentation and source): uvx builds its environment in the uv cache,
``archive-v0/<id>`` (``environments-v1``/``-v2`` in older releases), the cache being
``UV_CACHE_DIR``, else ``$XDG_CACHE_HOME/uv`` or ``~/.cache/uv`` (``%LOCALAPPDATA%\\uv\\cache``);
``pipx run`` builds it in ``$PIPX_HOME/.cache/<hash>``, ``~/.local/pipx/.cache`` (the legacy
home) or the platform's cache folder for pipx (``~/.cache/pipx`` on Linux).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal

PACKAGE = "aletheia-mem"
# uv's cache buckets that hold whole environments: archive-v0, environments-v2, builds-v0...
_UV_BUCKET = re.compile(r"^(archive|environments|builds)-v\d+$")


@dataclass(frozen=True)
class Launcher:
    """The run-once tool that started us, and how to start the CLI again through it."""

    kind: Literal["uvx", "pipx"]
    program: str  # its absolute path when it is on PATH, else its name

    def command(self, *args: str) -> list[str]:
        if self.kind == "uvx":
            return [self.program, PACKAGE, *args]
        return [self.program, "run", "--spec", PACKAGE, PACKAGE, *args]


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _uv_caches(env: Mapping[str, str]) -> list[Path]:
    home = _home(env)
    found = [Path(env["UV_CACHE_DIR"])] if env.get("UV_CACHE_DIR") else []
    if env.get("XDG_CACHE_HOME"):
        found.append(Path(env["XDG_CACHE_HOME"]) / "uv")
    found.append(home / ".cache" / "uv")
    if env.get("LOCALAPPDATA"):
        found.append(Path(env["LOCALAPPDATA"]) / "uv" / "cache")
    return found


def _pipx_caches(env: Mapping[str, str]) -> list[Path]:
    home = _home(env)
    found = [Path(env["PIPX_HOME"]) / ".cache"] if env.get("PIPX_HOME") else []
    found += [home / ".local" / "pipx" / ".cache", home / ".local" / "share" / "pipx" / ".cache"]
    if env.get("XDG_CACHE_HOME"):
        found.append(Path(env["XDG_CACHE_HOME"]) / "pipx")
    found += [home / ".cache" / "pipx", home / "Library" / "Caches" / "pipx"]
    found.append(home / "Library" / "Application Support" / "pipx" / ".cache")
    if env.get("LOCALAPPDATA"):
        found.append(Path(env["LOCALAPPDATA"]) / "pipx" / "pipx" / "Cache")
    return found


def _inside(path: Path, folders: list[Path]) -> bool:
    forms = {path.absolute(), path.resolve()}
    for folder in folders:
        for form in (folder.expanduser().absolute(), folder.expanduser().resolve()):
            if any(candidate.is_relative_to(form) for candidate in forms):
                return True
    return False


def temporary_launcher(
    prefix: Path | None = None, env: Mapping[str, str] | None = None
) -> Launcher | None:
    """The launcher when the environment at ``prefix`` (``sys.prefix``) is a run-once cache."""
    env = os.environ if env is None else env
    prefix = Path(sys.prefix) if prefix is None else prefix
    if _in_uv_bucket(prefix) or _inside(prefix, _uv_caches(env)):
        return Launcher("uvx", _on_path("uvx", env))
    if _inside(prefix, _pipx_caches(env)):
        return Launcher("pipx", _on_path("pipx", env))
    return None


def _in_uv_bucket(prefix: Path) -> bool:
    """Inside ``<a cache named uv or cache>/archive-v0/``: a uv cache given by ``--cache-dir``."""
    parts = prefix.absolute().parts
    return any(
        _UV_BUCKET.match(part) and ("uv" in parent.lower() or "cache" in parent.lower())
        for parent, part in pairwise(parts)
    )


def _on_path(name: str, env: Mapping[str, str]) -> str:
    found = shutil.which(name, path=env.get("PATH"))
    return os.path.abspath(found) if found else name
