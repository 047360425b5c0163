"""Build the labelled query set from the corpus, deterministically.

Four kinds, each labelled with the corpus key(s) of the memory that answers it:

* ``exact``: three moderately rare words the target contains (only the target has all three);
* ``identifier``: a definition's name spelled another way (``getCloseMatches`` for
  ``get_close_matches``, ``topological-sorter`` for ``TopologicalSorter``), with its module or path;
* ``paraphrase``: hand-written questions (``data/paraphrases.json``) that share no content word with
  the target; this script checks that with Aletheia's own tokenizer and stop words;
* ``temporal``: "what is the current version of X" over Debian changelogs, where every release of X
  matches and only the newest one is right (older ones hold superseded facts).

Usage: ``python bench/retrieval/build_queries.py`` writes ``data/queries.jsonl``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from dataset import load_corpus

from aletheia_mem.search.query import STOPWORDS, query_terms
from aletheia_mem.search.text import index_extras, split_identifier

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "data" / "queries.jsonl"
PARAPHRASES = HERE / "data" / "paraphrases.json"
PER_KIND = 100
_WORD = re.compile(r"[A-Za-z]{4,}")
_TEMPORAL = (
    "current {p} version",
    "latest {p} release",
    "what version of {p} do we ship now",
    "newest {p} package upload",
    "which {p} release is the most recent",
)


def _order(key: str, salt: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}:{key}".encode()).digest()[:8], "big")


def _words(item: dict[str, object]) -> list[str]:
    text = f"{item['title']}\n{item['text']}"
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in STOPWORDS]


def exact_queries(corpus: list[dict[str, object]], skip: set[str]) -> list[dict[str, object]]:
    """Three words of moderate rarity, in the order the target has them, unique to it."""
    doc_words = {str(item["key"]): set(_words(item)) for item in corpus}
    df = Counter(word for words in doc_words.values() for word in words)
    out: list[dict[str, object]] = []
    for item in sorted(corpus, key=lambda i: _order(str(i["key"]), "exact")):
        key = str(item["key"])
        if key in skip:
            continue
        picked: list[str] = []
        for word in dict.fromkeys(_words(item)):
            if 2 <= df[word] <= 60:
                picked.append(word)
            if len(picked) == 3:
                break
        if len(picked) < 3:
            continue
        holders = [k for k, words in doc_words.items() if set(picked) <= words]
        if holders != [key]:
            continue
        out.append({"kind": "exact", "query": " ".join(picked), "targets": [key]})
        if len(out) == PER_KIND:
            break
    return out


def _respell(name: str, style: int) -> str | None:
    """The same identifier in another convention, or None when it has a single word."""
    words = [w for part in re.split(r"[_\-]+", name) for w in (split_identifier(part) or [part])]
    words = [w for w in words if w]
    if len(words) < 2:
        return None
    lower = [w.lower() for w in words]
    if "_" in name or name.islower():
        spelled = (
            lower[0] + "".join(w.capitalize() for w in lower[1:]),  # camelCase
            "-".join(lower),  # kebab-case
            "".join(w.capitalize() for w in lower),  # PascalCase
        )
    else:
        spelled = ("_".join(lower), "-".join(lower), "_".join(lower).upper())
    return spelled[style % 3]


def identifier_queries(corpus: list[dict[str, object]], skip: set[str]) -> list[dict[str, object]]:
    """A definition's last name respelled, qualified by its module or file path."""
    titles = Counter(str(item["title"]).rsplit(".", 1)[-1].lower() for item in corpus)
    out: list[dict[str, object]] = []
    stdlib = [i for i in corpus if str(i["key"]).startswith("py:") and "." in str(i["title"])]
    for n, item in enumerate(sorted(stdlib, key=lambda i: _order(str(i["key"]), "ident"))):
        key, title = str(item["key"]), str(item["title"])
        module, name = title.rsplit(".", 1)
        spelled = _respell(name, n)
        if key in skip or spelled is None:
            continue
        if n % 2 and item["files"]:
            qualifier = str(item["files"][0]).removeprefix("Lib/")  # type: ignore[index]
        else:
            qualifier = module.rsplit(".", 1)[-1]
        query = f"{qualifier} {spelled}"
        same = [
            other["key"]
            for other in corpus
            if str(other["title"]).rsplit(".", 1)[-1].lower() == name.lower()
            and qualifier.split("/")[-1].split(".")[0] in str(other["title"])
        ]
        if titles[name.lower()] > 8 or same != [key]:
            continue
        out.append({"kind": "identifier", "query": query, "targets": [key]})
        if len(out) == PER_KIND:
            break
    return out


def temporal_queries(corpus: list[dict[str, object]]) -> list[dict[str, object]]:
    """ "Current version of X" questions; the answer is X's newest release entry."""
    releases: dict[str, list[dict[str, object]]] = {}
    for item in corpus:
        if str(item["key"]).startswith("deb:"):
            releases.setdefault(str(item["key"]).split(":")[1], []).append(item)
    out: list[dict[str, object]] = []
    ordered = sorted(releases, key=lambda source: _order(source, "temporal"))
    for n, source in enumerate(ordered):
        entries = sorted(releases[source], key=lambda i: (int(str(i["created_at"])), str(i["key"])))
        if len(entries) < 3 or int(str(entries[-1]["created_at"])) == int(
            str(entries[-2]["created_at"])
        ):
            continue
        query = _TEMPORAL[n % len(_TEMPORAL)].format(p=source)
        out.append({"kind": "temporal", "query": query, "targets": [str(entries[-1]["key"])]})
        if len(out) == PER_KIND:
            break
    return out


def _content_terms(text: str) -> set[str]:
    return set(query_terms(text)) - STOPWORDS


def paraphrase_queries(corpus: list[dict[str, object]]) -> list[dict[str, object]]:
    """The hand-written paraphrases, refused when one shares a searchable term with its target."""
    by_key = {str(item["key"]): item for item in corpus}
    out: list[dict[str, object]] = []
    problems: list[str] = []
    for entry in json.loads(PARAPHRASES.read_text(encoding="utf-8")):
        target = by_key[entry["target"]]
        fields = [str(target["title"]), str(target["text"]), *target["files"]]  # type: ignore[misc]
        text = "\n".join(fields)
        target_terms = {_stem(t) for t in query_terms(text + " " + " ".join(index_extras(text)))}
        shared = {t for t in _content_terms(entry["query"]) if _stem(t) in target_terms}
        if shared:
            problems.append(f"{entry['target']}: {entry['query']!r} shares {sorted(shared)}")
            continue
        out.append({"kind": "paraphrase", "query": entry["query"], "targets": [entry["target"]]})
    if problems:
        raise SystemExit("paraphrases sharing words with their target:\n" + "\n".join(problems))
    return out


_SUFFIXES = ("ational", "ization", "ing", "edly", "ed", "ies", "es", "s", "ly", "er", "ion")


def _stem(word: str) -> str:
    """A crude stem, stricter than Porter's (it conflates more), for the shared-word check."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)][:6]
    return word[:6]


def build() -> list[dict[str, object]]:
    corpus = load_corpus()
    paraphrases = paraphrase_queries(corpus)
    taken = {str(q["targets"][0]) for q in paraphrases}  # type: ignore[index]
    queries = [
        *exact_queries(corpus, taken),
        *identifier_queries(corpus, taken),
        *paraphrases,
        *temporal_queries(corpus),
    ]
    for n, query in enumerate(queries, start=1):
        query["id"] = n
    return queries


def main() -> None:
    queries = build()
    QUERIES.write_text(
        "".join(json.dumps(q, ensure_ascii=False, sort_keys=True) + "\n" for q in queries),
        encoding="utf-8",
    )
    kinds = Counter(str(q["kind"]) for q in queries)
    print(f"{len(queries)} queries {dict(kinds)} -> {QUERIES}")


if __name__ == "__main__":
    main()
