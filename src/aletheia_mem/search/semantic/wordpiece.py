"""BERT's uncased WordPiece tokenizer in plain Python (the model's ``vocab.txt``)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"
MAX_WORD_CHARS = 100


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _clean(text: str) -> str:
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code in (0, 0xFFFD):
            continue
        category = unicodedata.category(char)
        if char in "\t\n\r" or category == "Zs":
            out.append(" ")
        elif category in ("Cc", "Cf"):
            continue
        elif _is_cjk(code):
            out.append(f" {char} ")
        else:
            out.append(char)
    return "".join(out)


def basic_words(text: str) -> list[str]:
    """Lower-cased, accent-stripped words with every punctuation mark on its own."""
    words: list[str] = []
    for token in _clean(text).lower().split():
        token = "".join(
            c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn"
        )
        current = ""
        for char in token:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                words.append(char)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


class WordPiece:
    """Greedy longest-match-first subwords, as ``BertTokenizer`` does."""

    def __init__(self, vocab_file: Path) -> None:
        lines = vocab_file.read_text(encoding="utf-8").splitlines()
        self.vocab = {token: index for index, token in enumerate(lines)}
        self.cls_id, self.sep_id, self.unk_id = (self.vocab[t] for t in (CLS, SEP, UNK))
        self._cache: dict[str, list[int]] = {}

    def _word_ids(self, word: str) -> list[int]:
        cached = self._cache.get(word)
        if cached is None:
            cached = self._split(word)
            if len(self._cache) < 200_000:
                self._cache[word] = cached
        return cached

    def _split(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk_id]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            ids.append(found)
            start = end
        return ids

    def encode(self, text: str, max_length: int) -> list[int]:
        """``[CLS] pieces... [SEP]``, cut to ``max_length`` ids in all."""
        ids = [self.cls_id]
        for word in basic_words(text):
            ids.extend(self._word_ids(word))
            if len(ids) >= max_length - 1:
                break
        return [*ids[: max_length - 1], self.sep_id]
