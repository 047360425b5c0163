"""The labelled redaction corpus (``tests/domain/redaction_corpus.jsonl``, built by
``bench/redaction_corpus.py``): every secret disappears and every look-alike survives intact."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aletheia_mem.domain.redaction import REDACTED, redact_secrets

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redaction_corpus import Case, load_corpus

CASES = load_corpus()
SECRET_CASES = [case for case in CASES if case.secrets]
INNOCENT_CASES = [case for case in CASES if not case.secrets]


def _params(cases: list[Case]) -> list[object]:
    return [pytest.param(case, id=f"{case.family}-{n}") for n, case in enumerate(cases, 1)]


def test_corpus_has_400_cases_in_80_secret_formats() -> None:
    assert len(CASES) >= 400
    assert len({case.family for case in SECRET_CASES}) >= 80
    assert len(INNOCENT_CASES) >= 150


@pytest.mark.parametrize("case", _params(SECRET_CASES))
def test_corpus_secret_never_survives_redaction(case: Case) -> None:
    redacted = redact_secrets(case.text)
    for secret in case.secrets:
        assert secret not in redacted
    assert REDACTED in redacted


@pytest.mark.parametrize("case", _params(INNOCENT_CASES))
def test_corpus_look_alike_survives_byte_for_byte(case: Case) -> None:
    assert redact_secrets(case.text) == case.text


@pytest.mark.parametrize("case", _params(CASES))
def test_corpus_redaction_is_a_fixed_point(case: Case) -> None:
    once = redact_secrets(case.text)
    assert redact_secrets(once) == once
