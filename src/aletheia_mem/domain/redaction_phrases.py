"""Passphrases written bare after a password name and a colon: YAML, notes, chat.

``password: correct horse battery staple`` holds a passphrase of random words; ``password: the
one in the vault`` and ``password: see 1Password`` say where it is. A value is read as a
passphrase only when it is the whole rest of a line that starts with the password name (a YAML
key, a label, a list item, at most one qualifier before it: ``wifi passphrase:``), and it is 4
to 8 lower-case words none of which carries the grammar or the vocabulary of prose: no
article, pronoun, preposition, conjunction, auxiliary, negation or instruction ("see", "ask",
"use"), no word about where secrets live or what they are like ("vault", "random", "prod"),
no word ending in "-ed", "-ing" or "-ly" ("rotated", "pending", "monthly"). A sentence (a final
"."), mixed capitals and digits keep the line as it is. Words all in Title Case (``Correct Horse
Battery Staple``) or run together in CamelCase (``CorrectHorseBatteryStaple``, two words at
least) are read alike, with more words that make a title or a type rather than a passphrase
("Reset Email Template Update", ``SecretStr``, ``HashedValue``); a CamelCase value that ends its
line is no annotation of a parameter or a TypeScript member (those go on with "," or ";").

Inside a sentence, ``the wifi password is correct horse battery staple.`` holds one too: 4 to 8
words, all lower case or all in Title Case, after a password name and "is" or "was", ending the
clause (a line's end or ".", "!", ",", ";"), none of them prose as above.
"""

from __future__ import annotations

import re

from aletheia_mem.domain.redaction_names import is_password_name
from aletheia_mem.domain.redaction_values import lower_same_length, redact_span

# The value: ":", then 4 to 8 lower-case words up to the end of the line or a "#" comment. Found
# first (a colon is rarer than a line start), then the line's start is read up to it: indentation,
# an optional list or quote mark, an optional qualifier word, the name (maybe quoted or in bold).
# Every part is bounded and possessive, and one line holds at most one value: linear.
_LOWER_WORDS = r"[a-z]{1,20}+(?:[ \t]{1,2}+[a-z]{1,20}+){3,7}+"
_TITLE_WORDS = r"[A-Z][a-z]{0,19}+(?:[ \t]{1,2}+[A-Z][a-z]{0,19}+){3,7}+"
_CAMEL_WORDS = r"(?:[A-Z][a-z]{1,19}+){2,8}+"
_VALUE = re.compile(
    rf":[ \t]{{1,8}}+(?P<value>{_LOWER_WORDS}|{_TITLE_WORDS}|{_CAMEL_WORDS})"
    r"[ \t]*+(?:#[^\n]*+)?\r?$",
    re.MULTILINE,
)
_CAMEL_WORD = re.compile(r"[A-Z][a-z]++")
_HEAD = re.compile(
    r"[ \t]{0,40}+(?:[-*>][ \t]{1,4}+)?(?:(?P<qualifier>[A-Za-z]{1,20}+)[ \t]{1,4}+)?"
    r"(?:\*\*|[\"'])?(?P<name>[A-Za-z][\w.\-]{0,79}+)(?:\*\*|[\"'])?[ \t]{0,4}+"
)
# How far before the colon a password name's last word starts: "passphrase**  :"
_NAME_WINDOW = 16
_MIN_WORD_LENGTH_FOR_SUFFIXES = 5  # "bed", "red", "fly": words; "rotated", "monthly": prose
_PROSE_SUFFIXES = ("ed", "ing", "ly")
# Grammar (articles, pronouns, prepositions, conjunctions, auxiliaries, negations, instructions)
# and the vocabulary of notes about secrets (where they live, what they are like)
_PROSE_WORDS = frozenset(
    {
        "a", "an", "the", "this", "that", "these", "those", "it", "its", "i", "you", "your", "we",
        "our", "they", "their", "he", "she", "his", "her", "my", "me", "us", "them", "one", "ones",
        "who", "whom", "whose", "which", "what", "where", "when", "why", "how", "here", "there",
        "in", "on", "at", "of", "for", "from", "to", "into", "onto", "with", "without", "by", "via",
        "as", "per", "than", "then", "over", "under", "after", "before", "during", "until", "since",
        "about", "around", "through", "between", "inside", "outside", "off", "out", "up", "down",
        "and", "or", "but", "nor", "so", "if", "while", "unless", "because", "though", "also",
        "too", "just", "only", "still", "yet", "again", "else", "instead", "either", "neither",
        "both", "each", "every", "any", "all", "some", "many", "few", "more", "most", "less",
        "least", "other", "another", "same", "such", "own", "is", "are", "was", "were", "be",
        "been", "being", "am", "do", "does", "did", "done", "has", "have", "had", "can", "could",
        "will", "would", "should", "shall", "may", "might", "must", "need", "needs", "get", "gets",
        "got", "set", "sets", "put", "keep", "kept", "see", "ask", "use", "uses", "check", "read",
        "find", "look", "copy", "paste", "go", "goes", "come", "comes", "lives", "live", "make",
        "made", "take", "give", "try", "not", "no", "none", "never", "nothing", "nobody", "n",
        "tbd", "todo", "please", "ok", "okay", "yes", "password", "passwords", "passphrase",
        "passphrases", "passwd", "pwd", "pass", "secret", "secrets", "key", "keys", "token",
        "tokens", "credential", "credentials", "login", "vault", "keychain", "keyring", "bitwarden",
        "lastpass", "keepass", "onepassword", "manager", "store", "env", "var", "vars", "variable",
        "variables", "file", "files", "config", "setting", "settings", "default", "blank", "empty",
        "random", "generated", "words", "word", "characters", "chars", "char", "long", "short",
        "length", "minimum", "maximum", "min", "max", "strong", "weak", "required", "optional",
        "admin", "root", "user", "users", "team", "ops", "prod", "production", "staging", "stage",
        "dev", "development", "local", "test", "tests", "usual", "old", "new", "current",
        "previous", "first", "last", "next", "hint", "policy", "format", "example", "sample",
        "dummy", "fake"
    }
)  # fmt: skip


# Words of titles ("Password: Reset Email Template Update") and type names ("HashedValue",
# "OptionalString"), read in capitalised words only: in lower case they stay passphrase words
_CAPITALISED_PROSE_WORDS = frozenset(
    {
        "reset", "update", "updates", "fix", "fixes", "change", "changes", "migration", "flow",
        "email", "template", "page", "form", "field", "fields", "screen", "dialog", "modal",
        "button", "rule", "rules", "validation", "validator", "strength", "meter", "expiry",
        "expiration", "hash", "hashed", "hasher", "storage", "design", "redesign", "proposal",
        "plan", "note", "notes", "bug", "issue", "ticket", "feature", "support", "api", "service",
        "services", "account", "accounts", "rotation", "requirement", "requirements", "complexity",
        "history", "recovery", "reuse", "audit", "review", "docs", "guide", "setup", "overview",
        "summary", "status", "error", "errors", "logout", "auth", "authentication", "security",
        "encryption", "str", "string", "strings", "int", "integer", "bytes", "bool", "boolean",
        "type", "types", "value", "values", "model", "schema", "input", "optional", "list",
        "dict", "map", "union", "literal", "annotated", "object", "data", "dto", "payload",
        "entity", "record", "info", "handler", "provider", "factory", "encoder", "decoder",
        "class", "interface", "struct", "enum", "options", "params", "property", "attribute",
        "wrapper", "holder", "ref", "reference", "spec", "name", "text", "plain", "raw",
        "constrained", "sensitive", "encrypted", "masked", "hidden", "protected", "private",
        "public", "base", "abstract", "generic", "proxy", "column", "char", "mixin", "your",
        "foo", "bar", "baz", "replace", "insert", "enter", "here", "me", "binary", "blob",
        "large", "varchar", "float", "decimal", "uuid", "date", "time", "datetime", "number",
        "array", "tuple", "frozen", "mapped", "json", "sequence", "iterable", "callable",
        "nullable", "unicode", "ascii", "strict", "secure",
    }
)  # fmt: skip


def _is_passphrase(words: list[str]) -> bool:
    return not any(
        word in _PROSE_WORDS
        or (len(word) >= _MIN_WORD_LENGTH_FOR_SUFFIXES and word.endswith(_PROSE_SUFFIXES))
        for word in words
    )


def _is_passphrase_value(value: str) -> bool:
    """Whether ``value`` (lower-case or Title Case words, or CamelCase) is a passphrase."""
    words = value.split() if " " in value or "\t" in value else _CAMEL_WORD.findall(value)
    lowered = [word.lower() for word in words]
    if value[0].isupper() and any(word in _CAPITALISED_PROSE_WORDS for word in lowered):
        return False
    return _is_passphrase(lowered)


def redact_bare_passphrases(text: str) -> str:
    """Redact a passphrase given bare to a password name at a line's start (``password: correct
    horse battery staple``) or in a sentence (``the password is Correct Horse Battery Staple``)."""
    spans = _line_spans(text) if ":" in text else []
    if (" is " in text or " was " in text) and "pass" in lower_same_length(text):
        spans += _sentence_spans(text)  # not " Is ": a title, kept
    return redact_span(text, sorted(spans))


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for match in _VALUE.finditer(text):
        colon = match.start()
        near = text[max(0, colon - _NAME_WINDOW) : colon].lower()
        if "pass" not in near and "pw" not in near:
            continue  # a cheap check first: no password name ends just before the colon
        head = _HEAD.fullmatch(text, text.rfind("\n", 0, colon) + 1, colon)
        if (
            head is not None
            and is_password_name(head["name"])
            and (head["qualifier"] is None or head["qualifier"].lower() not in _PROSE_WORDS)
            and _is_passphrase_value(match["value"])
        ):
            spans.append(match.span("value"))
    return spans


# "the wifi password is correct horse battery staple.", "the passphrase for staging was Tiger
# Lamp Orbit Velvet": found from "is" or "was" (rarer than words), read back to the name.
_SENTENCE_VALUE = re.compile(
    r"[ \t](?:is|was)[ \t]{1,4}+"
    rf"(?P<value>{_LOWER_WORDS}|{_TITLE_WORDS})"
    r"(?=[ \t]{0,4}+(?:[.!,;](?:[ \t]|\r?$)|\r?$))",
    re.MULTILINE,
)
# What stands before "is": the password name, maybe with whom it is for ("for the staging db")
_SENTENCE_NAME = re.compile(
    r"(?<![A-Za-z])(?i:password|passphrase|passwd|passcode)"
    r"(?:[ \t](?i:for|of|on|to|in)[ \t][^\n.;:=]{1,30}+)?$"
)
_SENTENCE_WINDOW = 48


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for match in _SENTENCE_VALUE.finditer(text):
        before = text[max(0, match.start() - _SENTENCE_WINDOW) : match.start()]
        if "pass" not in before.lower():
            continue  # a cheap check first: no password name before "is"
        if _SENTENCE_NAME.search(before) and _is_passphrase_value(match["value"]):
            spans.append(match.span("value"))
    return spans
