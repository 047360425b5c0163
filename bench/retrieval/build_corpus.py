"""Build the retrieval corpus from text that ships on the machine, offline and deterministically.

Two real sources, both present on a fresh machine of this project's kind:

* the Python standard library's own source: one memory per documented public module, class,
  function or method (title = dotted name, text = signature + docstring, files = ``Lib/<path>``);
* Debian package changelogs (``/usr/share/doc/*/changelog.Debian.gz``): one memory per release
  entry, dated with the entry's date, carrying the fact ``(<package>, debian version, <v>)`` so that
  each newer release supersedes the one before, as facts do in Aletheia.

Usage: ``python bench/retrieval/build_corpus.py`` writes ``data/corpus.jsonl.gz``. The shipped file
was built on Python 3.11.7 and Debian 13; a rebuild elsewhere may differ slightly, which is why the
built corpus is committed and the runner reads that file.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import re
import sys
import sysconfig
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "data" / "corpus.jsonl.gz"
PARAPHRASES = HERE / "data" / "paraphrases.json"
CHANGELOG_ENTRIES_PER_PACKAGE = 6
MIN_CHANGELOG_ENTRIES = 3
MAX_TEXT = 1500
MIN_DOC = 60
_SKIP_PARTS = {
    "test",
    "tests",
    "idle_test",
    "site-packages",
    "_bundled",
    "turtledemo",
    "__pycache__",
    "__phello__",
}
_EPOCH_START = int(datetime(2023, 1, 1, tzinfo=UTC).timestamp() * 1000)
_EPOCH_SPAN = int(datetime(2026, 10, 1, tzinfo=UTC).timestamp() * 1000) - _EPOCH_START
_HEADER = re.compile(r"^(?P<source>[a-z0-9][a-z0-9+.-]*) \((?P<version>[^)]+)\) (?P<dist>[^;]+);")
_TRAILER = re.compile(r"^ -- .*?>\s+(?P<date>.+)$")


def _stable_int(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    try:
        return f"({ast.unparse(node.args)})"
    except (ValueError, AttributeError):
        return "(...)"


def _definitions(tree: ast.Module) -> Iterator[tuple[str, str, str]]:
    """(qualified name within the module, signature, docstring) of public definitions."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            yield node.name, _signature(node), ast.get_docstring(node) or ""
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            yield node.name, "", ast.get_docstring(node) or ""
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and _public(
                    child.name
                ):
                    name = f"{node.name}.{child.name}"
                    yield name, _signature(child), ast.get_docstring(child) or ""


def _public(name: str) -> bool:
    return not name.startswith("_")


def stdlib_candidates(root: Path) -> list[dict[str, object]]:
    """Every public documented definition of the standard library, as a memory."""
    found: list[dict[str, object]] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _SKIP_PARTS.intersection(rel.parts) or rel.parts[0].startswith("config-"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        module = _module_name(root, path)
        if any(part.startswith("_") for part in module.split(".")):
            continue
        module_doc = ("", "", ast.get_docstring(tree) or "")
        for qualname, signature, doc in (module_doc, *_definitions(tree)):
            if len(doc) < MIN_DOC:
                continue
            name = f"{module}.{qualname}" if qualname else module
            text = f"{name}{signature}\n\n{doc}" if signature else doc
            found.append(
                {
                    "key": f"py:{name}",
                    "title": name,
                    "text": text[:MAX_TEXT],
                    "type": "discovery",
                    "files": [f"Lib/{rel.as_posix()}"],
                    "created_at": _EPOCH_START + _stable_int(name) % _EPOCH_SPAN,
                    "facts": [],
                }
            )
    return found


def check_targets(candidates: list[dict[str, object]], required: set[str]) -> None:
    """Stop when a hand-written query names a definition this standard library lacks."""
    missing = sorted(required - {str(item["key"]) for item in candidates})
    if missing:
        raise SystemExit(f"paraphrase targets missing from the stdlib: {missing}")


def _parse_changelog(text: str) -> list[dict[str, str | int]]:
    entries: list[dict[str, str | int]] = []
    current: dict[str, str | int] | None = None
    body: list[str] = []
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            current, body = dict(header.groupdict()), []
            continue
        trailer = _TRAILER.match(line)
        if trailer and current is not None:
            try:
                when = parsedate_to_datetime(trailer["date"].strip())
            except (TypeError, ValueError):
                current = None
                continue
            current["at"] = int(when.timestamp() * 1000)
            current["body"] = "\n".join(body).strip("\n")
            entries.append(current)
            current = None
            continue
        if current is not None:
            body.append(line[2:] if line.startswith("  ") else line)
    return entries


def changelog_memories(doc_root: Path) -> list[dict[str, object]]:
    """The newest release entries of every Debian source package with enough history."""
    by_source: dict[str, list[dict[str, str | int]]] = {}
    seen_files: set[Path] = set()
    for path in sorted(doc_root.glob("*/changelog.Debian.gz")):
        real = path.resolve()
        if real in seen_files or not real.exists():
            continue
        seen_files.add(real)
        entries = _parse_changelog(gzip.decompress(real.read_bytes()).decode("utf-8", "replace"))
        if entries:
            by_source.setdefault(str(entries[0]["source"]), entries)
    memories: list[dict[str, object]] = []
    for source in sorted(by_source):
        entries = [e for e in by_source[source] if str(e["body"]).strip()]
        if len(entries) < MIN_CHANGELOG_ENTRIES:
            continue
        newest = sorted(entries[:CHANGELOG_ENTRIES_PER_PACKAGE], key=lambda e: int(e["at"]))
        for entry in newest:
            version = str(entry["version"])
            memories.append(
                {
                    "key": f"deb:{source}:{version}",
                    "title": f"{source} {version} ({str(entry['dist']).strip()})",
                    "text": str(entry["body"])[:MAX_TEXT],
                    "type": "change",
                    "files": [],
                    "created_at": int(entry["at"]),
                    "facts": [[source, "debian version", version]],
                }
            )
    return memories


def build() -> list[dict[str, object]]:
    """The whole corpus, oldest first (the order the runner saves it in)."""
    paraphrases = json.loads(PARAPHRASES.read_text(encoding="utf-8"))
    required = {str(item["target"]) for item in paraphrases}
    stdlib = stdlib_candidates(Path(sysconfig.get_paths()["stdlib"]))
    check_targets(stdlib, required)
    corpus = stdlib + changelog_memories(Path("/usr/share/doc"))
    return sorted(corpus, key=lambda item: (int(str(item["created_at"])), str(item["key"])))


def main() -> None:
    corpus = build()
    lines = "".join(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n" for item in corpus)
    CORPUS.parent.mkdir(parents=True, exist_ok=True)
    CORPUS.write_bytes(gzip.compress(lines.encode(), compresslevel=9, mtime=0))
    kinds: dict[str, int] = {}
    for item in corpus:
        kinds[str(item["type"])] = kinds.get(str(item["type"]), 0) + 1
    print(f"{len(corpus)} memories {kinds} -> {CORPUS} (Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
