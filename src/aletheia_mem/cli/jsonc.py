"""A JSON-with-comments reader that remembers where every value sits in the text.

Host config files are JSON (``~/.claude.json``) or JSONC (VS Code, OpenCode, Cursor): comments
and trailing commas are allowed. Editing them by position keeps every byte outside the changed
member as it was, which a load-and-dump round trip cannot.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any


class JsoncError(ValueError):
    """The text is not JSON or JSONC; the message says where."""


class JsoncShapeError(JsoncError):
    """The text parses, but something on the path to a member is not an object."""


class JsoncDuplicateKeyError(JsoncError):
    """An object to be edited holds a key twice: which member a host reads is unclear, and the
    positions of one of them would cut the wrong text."""


@dataclass
class Node:
    """One value: its span ``[start, end)`` in the text and its Python value."""

    start: int
    end: int
    value: Any
    members: dict[str, Member] = field(default_factory=dict)  # objects only
    elements: list[Node] = field(default_factory=list)  # arrays only


@dataclass
class Member:
    key: str
    key_start: int
    node: Node


_LITERALS = {"true": True, "false": False, "null": None}
# Objects and arrays in each other, as deep as tomlkit reads TOML: deeper ones would exhaust
# Python's recursion (a traceback instead of the config file's name and the problem).
MAX_DEPTH = 100
# Runs the parser steps over at C speed: a long-used ~/.claude.json holds megabytes.
_BLANKS = re.compile(r"[ \t\r\n\ufeff]*")
_STRING = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_WORD = re.compile(r"[^ \t\r\n,\]}/]*")
_DECODER = json.JSONDecoder()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.trail: list[str] = []  # the keys of the members being read, outermost first

    def fail(self, problem: str) -> JsoncError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JsoncError(f"{problem} at line {line}, column {column}")

    def duplicate(self, key: str) -> JsoncDuplicateKeyError:
        line = self.text.count("\n", 0, self.pos) + 1
        where = ".".join(self.trail) or "the top level"
        name = json.dumps(key, ensure_ascii=False)[:80]
        return JsoncDuplicateKeyError(
            f"{where} holds the key {name} twice (the second at line {line}); remove one of"
            " them, then run this again"
        )

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            self.pos = _BLANKS.match(text, self.pos).end()  # type: ignore[union-attr]
            if text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unclosed comment")
                self.pos = end + 2
            else:
                return

    def value(self, path: tuple[str, ...] | None = None) -> Node:
        """The next value; with ``path``, only the members on it keep their positions."""
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text")
        char = self.text[self.pos]
        if char in "{[":
            return self.nested(char, path)
        if char == '"':
            start = self.pos
            text = self.string()
            return Node(start, self.pos, text)
        return self.scalar()

    def nested(self, char: str, path: tuple[str, ...] | None) -> Node:
        """An object or an array, at most ``MAX_DEPTH`` levels deep."""
        if self.depth >= MAX_DEPTH:
            raise self.fail(f"value nested more than {MAX_DEPTH} levels deep")
        self.depth += 1
        node = self.object(path) if char == "{" else self.array()
        self.depth -= 1
        return node

    def string(self) -> str:
        match = _STRING.match(self.text, self.pos)
        if match is None:
            raise self.fail("unclosed string")
        try:
            result: str = json.loads(match.group())
        except ValueError:
            raise self.fail("bad string") from None
        self.pos = match.end()
        return result

    def scalar(self) -> Node:
        start = self.pos
        text = self.text
        self.pos = _WORD.match(text, start).end()  # type: ignore[union-attr]
        word = text[start : self.pos]
        if word in _LITERALS:
            return Node(start, self.pos, _LITERALS[word])
        try:
            number = json.loads(word)
        except ValueError:
            self.pos = start
            raise self.fail(f"unexpected {word[:20]!r}") from None
        if not isinstance(number, int | float):
            raise self.fail(f"unexpected {word[:20]!r}")
        return Node(start, self.pos, number)

    def expect(self, char: str) -> None:
        self.skip()
        if not self.text.startswith(char, self.pos):
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def quick_value(self) -> Node:
        """A value off the path: plain JSON read at C speed, else (comments, trailing commas)
        by this parser."""
        self.skip()
        start = self.pos
        try:
            value, end = _DECODER.raw_decode(self.text, start)
        except (ValueError, RecursionError):
            return self.value()
        self.pos = end
        return Node(start, end, value)

    def member_value(self, key: str, path: tuple[str, ...] | None) -> Node:
        if path is None:
            return self.value()
        if path and key == path[0]:
            return self.value(path[1:])
        return self.quick_value()

    def object(self, path: tuple[str, ...] | None = None) -> Node:
        """An object; with ``path`` (one on the way to an edit) a key read twice is refused
        where it matters: the key on the way, or any key of the object edited (``path`` empty).

        Raises:
            JsoncDuplicateKeyError: such a key is there twice.
        """
        node = Node(self.pos, self.pos, {})
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a member name")
            key_start = self.pos
            key = self.string()
            if key in node.members and path is not None and (not path or key == path[0]):
                self.pos = key_start
                raise self.duplicate(key)
            self.expect(":")
            self.trail.append(key)
            child = self.member_value(key, path)
            self.trail.pop()
            node.members[key] = Member(key, key_start, child)
            node.value[key] = child.value
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
        self.pos += 1
        node.end = self.pos
        return node

    def array(self) -> Node:
        node = Node(self.pos, self.pos, [])
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            child = self.value()
            node.elements.append(child)
            node.value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str, path: tuple[str, ...] | None = None) -> Node:
    """The root value of a JSON or JSONC text, with positions (with ``path``: only of the
    objects on it and their members).

    Raises:
        JsoncError: the text is not JSON or JSONC.
    """
    parser = _Parser(text)
    root = parser.value(path)
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the end")
    return root


def holds_no_value(text: str) -> bool:
    """Whether the text is only blanks and comments (a JSONC file with nothing set yet)."""
    parser = _Parser(text)
    try:
        parser.skip()
    except JsoncError:
        return False
    return parser.pos == len(text)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent_of(text: str, pos: int) -> str:
    start = _line_start(text, pos)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def indent_unit(text: str) -> str:
    """The file's indentation step: a tab, or the smallest run of leading spaces (default 2)."""
    sizes = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if line.startswith("\t"):
            return "\t"
        if stripped and len(line) > len(stripped):
            sizes.append(len(line) - len(stripped))
    return " " * (min(sizes) if sizes else 2)


def render(value: Any, indent: str, unit: str, newline: str) -> str:
    """``value`` as JSON whose continuation lines start at ``indent``."""
    body = json.dumps(value, indent=unit or None, ensure_ascii=False)
    return body.replace("\n", newline + indent)


def set_member(text: str, path: tuple[str, ...], value: Any) -> str:
    """``text`` with the member at ``path`` set to ``value``; every other byte kept.

    Missing objects on the way are created. An empty text becomes a new document.

    Raises:
        JsoncError: the text does not parse, or something on the path is not an object.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    if holds_no_value(text):
        document: Any = value
        for key in reversed(path):
            document = {key: document}
        rendered = json.dumps(document, indent=2, ensure_ascii=False).replace("\n", newline)
        if not text.strip():
            return rendered + newline
        return text + ("" if text.endswith("\n") else newline) + rendered + newline
    node = parse(text, path)
    unit = indent_unit(text)
    for depth, key in enumerate(path):
        if not isinstance(node.value, dict):
            where = ".".join(path[:depth]) or "the top level"
            raise JsoncShapeError(f"{where} is not an object")
        member = node.members.get(key)
        if member is None:
            rest: Any = value
            for later in reversed(path[depth + 1 :]):
                rest = {later: rest}
            return _insert_member(text, node, key, rest, unit, newline)
        if depth == len(path) - 1:
            indent = _indent_of(text, member.key_start)
            rendered = render(value, indent, unit, newline)
            return text[: member.node.start] + rendered + text[member.node.end :]
        node = member.node
    raise JsoncError("empty path")


def _insert_member(text: str, node: Node, key: str, value: Any, unit: str, newline: str) -> str:
    """Add ``"key": value`` as the last member of the object ``node``."""
    if node.members:
        last = list(node.members.values())[-1]
        indent = _indent_of(text, last.key_start)
        rendered = f"{json.dumps(key, ensure_ascii=False)}: {render(value, indent, unit, newline)}"
        after = last.node.end
        probe = _Parser(text)
        probe.pos = after
        probe.skip()
        has_comma = text.startswith(",", probe.pos)
        if _line_start(text, last.key_start) == _line_start(text, node.start):
            # A one-line object: keep it on one line.
            comma_at = probe.pos + 1 if has_comma else after
            rendered += "," if has_comma else ""  # a trailing comma stays the last member's
            return text[:comma_at] + ("" if has_comma else ",") + " " + rendered + text[comma_at:]
        line_end = text.find("\n", after)
        line_end = len(text) if line_end < 0 else line_end
        if text[line_end - 1 : line_end] == "\r":
            line_end -= 1
        # What follows the last member on its line, its comma aside: when that is only comments
        # (`"gh": {...}, /* note */`), the new member goes on the next line and the comments
        # stay with the line they were on; else (the closing brace, a comma on a later line)
        # it goes right after the last member.
        comma_later = has_comma and probe.pos >= line_end
        if has_comma and not comma_later:
            rest = text[after : probe.pos] + text[probe.pos + 1 : line_end]
        else:
            rest = text[after:line_end]
        if comma_later or not holds_no_value(rest):
            line_end = probe.pos + 1 if has_comma else after
        comma = "" if has_comma else ","
        rendered += "," if has_comma else ""  # a trailing comma stays the last member's
        head = text[:after] + comma + text[after:line_end]
        return head + newline + indent + rendered + text[line_end:]
    outer = _indent_of(text, node.start)
    indent = outer + unit
    rendered = f"{json.dumps(key, ensure_ascii=False)}: {render(value, indent, unit, newline)}"
    inside = text[node.start + 1 : node.end - 1]
    if not inside.strip():
        return (
            text[: node.start + 1]
            + newline
            + indent
            + rendered
            + newline
            + outer
            + text[node.end - 1 :]
        )
    close = node.end - 1
    if _own_line(text, close):  # comments inside, the brace on a line of its own: before it
        at = _line_start(text, close)
        return text[:at] + indent + rendered + newline + text[at:]
    return text[:close] + newline + indent + rendered + newline + outer + text[close:]


def get_member(text: str, path: tuple[str, ...]) -> Any:
    """The value at ``path``, or None where it is missing. A text with only blanks and
    comments has nothing."""
    if holds_no_value(text):
        return None
    try:  # plain JSON, the common case, at C speed
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        value = parse(text).value
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


# -- removing members and editing arrays in place -------------------------------------------


def _node_at(text: str, path: tuple[str, ...]) -> Node | None:
    """The node at ``path`` with positions, or None where it is missing."""
    node = parse(text, path)
    for key in path:
        member = node.members.get(key) if isinstance(node.value, dict) else None
        if member is None:
            return None
        node = member.node
    return node


def _after_blanks(text: str, pos: int) -> int:
    probe = _Parser(text)
    probe.pos = pos
    probe.skip()
    return probe.pos


def _own_line(text: str, start: int) -> bool:
    return not text[_line_start(text, start) : start].strip()


def _cut_item(text: str, starts: list[int], ends: list[int], index: int) -> str:
    """``text`` without the item ``index`` of an object or array (a member from its key, an
    element), and the comma that went with it; an item on lines of its own takes them along."""
    start, end = starts[index], ends[index]
    after = _after_blanks(text, end)
    own_line = _own_line(text, start)
    joined = _cut_joined(text, starts, ends, index) if own_line and index > 0 else None
    if joined is not None:
        return joined
    if text.startswith(",", after):
        end = after + 1
    elif index > 0:  # the last item: the comma before it goes, the previous one is the last now
        comma = _after_blanks(text, ends[index - 1])
        if not own_line:
            return text[:comma] + text[end:]
        text = text[:comma] + text[comma + 1 :]
        start, end = start - 1, end - 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if own_line and not text[end:line_end].strip():
        return text[: _line_start(text, start)] + text[line_end + 1 :]
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[:start] + text[end:]


def _cut_joined(text: str, starts: list[int], ends: list[int], index: int) -> str | None:
    """An item that starts a line but has more after it on that line (a closing brace, a
    comment), right after the previous item and its comma: where :func:`set_member` puts a
    member it adds after the last one on such a line. Cut with the line break before it, so
    that the line comes back as it was; None when the item is not so placed."""
    start, end = starts[index], ends[index]
    between = text[ends[index - 1] : start]
    if between.count(",") != 1 or between.replace(",", "").strip():
        return None  # a comment, or no comma, between the two: not where set_member puts it
    after = _after_blanks(text, end)
    has_comma = text.startswith(",", after)
    stop = after + 1 if has_comma else end
    line_end = text.find("\n", stop)
    if not text[stop : len(text) if line_end < 0 else line_end].strip():
        return None  # nothing else on its line: the plain cut takes the line
    if has_comma:  # the comma before it stays (the previous item's), the item's own goes
        comma = ends[index - 1] + between.index(",") + 1
        return text[:comma] + text[stop:]
    return text[: ends[index - 1]] + text[end:]  # the last item: the comma before it goes


def _emptied(text: str, path: tuple[str, ...]) -> str:
    """An object or array at ``path`` left with only blanks inside written ``{}`` or ``[]``."""
    node = _node_at(text, path)
    if node is None or text[node.start + 1 : node.end - 1].strip():
        return text
    return text[: node.start + 1] + text[node.end - 1 :]


def is_empty_object(text: str, path: tuple[str, ...]) -> bool:
    """Whether the value at ``path`` is an object written ``{}``, with nothing inside (not
    even a blank or a comment)."""
    if holds_no_value(text):
        return False
    node = _node_at(text, path)
    return node is not None and text[node.start : node.end] == "{}"


def remove_member(text: str, path: tuple[str, ...]) -> str:
    """``text`` without the member at ``path`` (unchanged when it is missing); every other
    byte kept, but for the comma and line that went with it.

    Raises:
        JsoncError: the text does not parse.
    """
    if holds_no_value(text):
        return text
    parent = _node_at(text, path[:-1])
    if parent is None or not isinstance(parent.value, dict) or path[-1] not in parent.members:
        return text
    members = list(parent.members.values())
    index = [member.key for member in members].index(path[-1])
    starts = [member.key_start for member in members]
    text = _cut_item(text, starts, [member.node.end for member in members], index)
    return _emptied(text, path[:-1])


def _element_spans(text: str, path: tuple[str, ...]) -> tuple[list[int], list[int]]:
    node = _node_at(text, path)
    if node is None or not isinstance(node.value, list):
        raise JsoncShapeError(f"{'.'.join(path)} is not a list")
    return [e.start for e in node.elements], [e.end for e in node.elements]


def _insert_element(text: str, path: tuple[str, ...], index: int, value: Any) -> str:
    """``value`` as element ``index`` of the array at ``path`` (which has elements)."""
    starts, ends = _element_spans(text, path)
    newline = "\r\n" if "\r\n" in text else "\n"
    unit = indent_unit(text)
    anchor = starts[min(index, len(starts) - 1)]
    own_line = _own_line(text, anchor)
    indent = _indent_of(text, anchor) if own_line else ""
    rendered = render(value, indent, unit if own_line else "", newline)
    if index < len(starts):
        if own_line:
            at = _line_start(text, anchor)
            return text[:at] + indent + rendered + "," + newline + text[at:]
        return text[:anchor] + rendered + ", " + text[anchor:]
    after = _after_blanks(text, ends[-1])
    trailing = text.startswith(",", after)
    at = after + 1 if trailing else ends[-1]
    gap = newline + indent if own_line else " "
    return (
        text[:at]
        + ("" if trailing else ",")
        + gap
        + rendered
        + ("," if trailing else "")
        + (text[at:])
    )


def _replace_element(text: str, path: tuple[str, ...], index: int, value: Any) -> str:
    starts, ends = _element_spans(text, path)
    newline = "\r\n" if "\r\n" in text else "\n"
    own_line = _own_line(text, starts[index])
    indent = _indent_of(text, starts[index]) if own_line else ""
    rendered = render(value, indent, indent_unit(text) if own_line else "", newline)
    return text[: starts[index]] + rendered + text[ends[index] :]


def _remove_element(text: str, path: tuple[str, ...], index: int) -> str:
    starts, ends = _element_spans(text, path)
    return _emptied(_cut_item(text, starts, ends, index), path)


def set_array(text: str, path: tuple[str, ...], values: list[Any]) -> str:
    """``text`` with the array at ``path`` holding ``values``: elements that stay keep their
    text as it was (a one-line group stays one line); only those added, changed or removed are
    written. A missing (or empty) array is set as :func:`set_member` does.

    Raises:
        JsoncError: the text does not parse, or something on the path is not an object.
    """
    node = None if holds_no_value(text) else _node_at(text, path)
    if node is None or not isinstance(node.value, list) or not node.elements:
        return set_member(text, path, values)

    def canonical(value: Any) -> str:
        return json.dumps(value, sort_keys=True)

    old = node.value
    matcher = difflib.SequenceMatcher(
        a=[canonical(v) for v in old], b=[canonical(v) for v in values], autojunk=False
    )
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1)
        for index in reversed(range(i1 + paired, i2)):
            text = _remove_element(text, path, index)
        for value in reversed(values[j1 + paired : j2]):
            text = (
                _insert_element(text, path, i1 + paired, value)
                if _node_at(text, path).elements  # type: ignore[union-attr]
                else set_member(text, path, [value])
            )
        for offset in reversed(range(paired)):
            text = _replace_element(text, path, i1 + offset, values[j1 + offset])
    return text
