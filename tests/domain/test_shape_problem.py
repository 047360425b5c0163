"""``shape_problem``: which problem a set of JSON values is refused for, the deepest-last first."""

from aletheia_mem.domain.limits import shape_problem

NESTED = "x must not nest more than 2 levels deep."
SURROGATE = "x must not contain lone surrogate characters."


def test_plain_values_of_every_kind_pass_at_any_level() -> None:
    values: list[object] = [1, 2.5, None, True, "ascii", {"k": ["v", 3, None]}, []]
    assert shape_problem(values, "x", 2) is None


def test_the_last_value_is_walked_first_so_its_problem_is_the_one_told() -> None:
    deep = [[[]]]
    assert shape_problem(["\ud800", deep], "x", 2) == NESTED
    assert shape_problem([deep, "\ud800"], "x", 2) == SURROGATE


def test_a_surrogate_in_a_key_or_under_numbers_and_text_is_found() -> None:
    assert shape_problem([{"a\udc00": 1}], "x", 5) == SURROGATE
    assert shape_problem([[1, "a", None, ["é\ud800"], 2, "b"]], "x", 5) == SURROGATE
    assert shape_problem([[1, "a", None, ["é"], 2, "b"]], "x", 5) is None


def test_a_list_past_the_depth_is_refused_even_when_empty() -> None:
    assert shape_problem([[[[]]]], "x", 2) == NESTED  # the empty list is at level 3
    assert shape_problem([[[[1]]]], "x", 2) == NESTED
    assert shape_problem([[[1]]], "x", 2) is None  # a number is no level
