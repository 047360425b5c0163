import re

from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.search import text as text_module
from aletheia_mem.search.text import index_extras


def test_repeated_identifier_adds_its_extras_once_in_first_seen_order() -> None:
    text = "retry_limit then fetchUserName, retry_limit again, fetchUserName again"
    assert index_extras(text) == ["retrylimit", "fetch", "User", "Name"]


def test_plain_and_capitalised_words_add_nothing_even_inside_paths() -> None:
    assert index_extras("Decided pnpm over npm; see Src/Payments/invoice.py") == []


def test_camel_case_and_digit_words_inside_paths_are_split() -> None:
    assert index_extras("apps/webClient/retries3.ts") == ["web", "Client", "retries"]


def test_letter_runs_of_a_word_with_digits_need_four_letters() -> None:
    assert index_extras("hash 3add9f and build2024") == ["build"]


def test_non_ascii_words_are_not_split() -> None:
    assert index_extras("café Évian naïveÉtat") == []


def test_ascii_text_gives_what_the_unicode_pattern_gives() -> None:
    # One non-ASCII plain word sends the text through the Unicode pattern and adds nothing.
    texts = [
        "set MAX_RETRIES in src/http/client.py; parseHTTPRequest calls k8s-PodSpec v2_api",
        "a.b.c __init__ x--y C:\\Users\\ci\\build_cache fooBar:bazQux retries3 A_B_C_D",
    ]
    for text in texts:
        assert index_extras(text) == index_extras(f"{text} café")
        assert index_extras(text)


def test_a_hostile_long_token_is_indexed_but_never_held_in_the_token_cache() -> None:
    """A client's 20,000-character identifiers, each new, would fill the cache with huge
    entries: only short tokens are kept, and the long one still gets its extras."""
    from aletheia_mem.search import text

    index_extras("see")  # the short word beside each long token: cached once, before counting
    before = text._cached_token_extras.cache_info().currsize
    long_tokens = [f"Chunk{n}_" + "_".join(f"partName{i}" for i in range(2_000)) for n in range(3)]
    for token in long_tokens:
        assert len(token) > text.CACHED_TOKEN_CHARS
        extras = index_extras(f"see {token}")
        assert any(len(extra) > 10_000 for extra in extras)  # its joined form, worked out
    assert text._cached_token_extras.cache_info().currsize == before
    index_extras("cache_probe_only_here")
    assert text._cached_token_extras.cache_info().currsize == before + 1


def _extras_of_every_token(text: str) -> list[str]:
    """``index_extras`` as it reads ASCII text: each compound token's extras, in order."""
    extras: dict[str, None] = {}
    for token in text_module.ASCII_COMPOUND.findall(text):
        for extra in text_module._token_extras(token):
            extras.setdefault(extra, None)
    return list(extras)


@given(st.text(alphabet="aAzZ09_-.:/\\ \n\tfooBarHTTPx1é", max_size=60))
@settings(max_examples=3000, deadline=None)
def test_the_plain_words_passed_over_in_the_regex_have_no_extras(text: str) -> None:
    ascii_text = text.encode("ascii", "ignore").decode()
    assert index_extras(ascii_text) == _extras_of_every_token(ascii_text)


def test_an_empty_field_is_indexed_as_empty() -> None:
    # A memory's narrative, facts and files are mostly empty: indexed as "" with no extras.
    assert text_module.index_text("") == ""
    assert text_module.index_text("fetchUserName") == "fetchUserName\nfetch User Name"


def _segments_by_splitting(compound: str) -> list[list[str]]:
    """``segments`` as defined: split on the path separators, then each on ``_`` and ``-``."""
    found = []
    for segment in re.split(r"[.:/\\]+", compound):
        words = [word for word in re.split(r"[_\-]+", segment) if word]
        if words:
            found.append(words)
    return found


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="aZ9é_-.:/\\ ", max_size=24))
def test_segments_split_only_where_a_separator_stands(text: str) -> None:
    # Parts without separators skip the splitting: the same words either way.
    for compound in text_module.COMPOUND.findall(text):
        assert text_module.segments(compound) == _segments_by_splitting(compound)
    for compound in ("parseHTTPRequest", "src/max_retries.py", "a--b", "C:\\x_y", "v2"):
        assert text_module.segments(compound) == _segments_by_splitting(compound)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789²٣߁", min_size=1, max_size=8))
def test_a_word_of_digits_alone_has_no_parts_so_its_extras_skip_it(word: str) -> None:
    assert text_module.strong_parts(word) == []
    assert text_module.split_identifier(word) == []
    assert index_extras(f"v2 {word} lib/{word}/fetchUser.py") == ["fetch", "User"]
