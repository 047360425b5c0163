"""Secrets written in look-alike characters: full-width, mathematical letters, ligatures,
Cyrillic or Greek letters that look like Latin ones, with zero-width characters or soft hyphens
inside. A tool that normalises the text (NFKC) or a human reads the real secret, so it is
redacted; the original characters around it, and every innocent text (Russian, Ukrainian and
Greek prose and code among them), are stored byte for byte.

The fake tokens are random and were never valid credentials; the corpus splits them after their
vendor prefix so that secret scanners do not flag the repository.
"""

# ruff: noqa: RUF001, RUF003  (full-width and other look-alike characters are the point here)
from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain.redaction import REDACTED, redact_named_value, redact_secrets
from aletheia_mem.domain.redaction_fold import _INVISIBLE, LATIN_LOOKALIKES, fold
from aletheia_mem.domain.redaction_trail import recording, replaced_regions
from aletheia_mem.domain.redaction_values import redact_span
from tests.cost import GROWTH, LINEAR_BOUND, cpu_ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redaction_corpus import Case, load_corpus

R = REDACTED
GH = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
AWS = "AKIA" + "Z7QWERTYUIOP1234"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def full_width(text: str) -> str:
    """Each printable ASCII character as its full-width form (U+FF01 to U+FF5E)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def math_bold(text: str) -> str:
    """Letters and digits as MATHEMATICAL BOLD ones (U+1D400...)."""
    out = []
    for c in text:
        if "A" <= c <= "Z":
            c = chr(0x1D400 + ord(c) - ord("A"))
        elif "a" <= c <= "z":
            c = chr(0x1D41A + ord(c) - ord("a"))
        elif "0" <= c <= "9":
            c = chr(0x1D7CE + ord(c) - ord("0"))
        out.append(c)
    return "".join(out)


# Latin letters as Cyrillic (lower case) and Greek (upper case) letters that look the same: the
# test's own table, read back by as_read.
_LATIN = "acdeijopsxyABEHIKMNOPTXYZ"
_LOOKS = "\u0430\u0441\u0501\u0435\u0456\u0458\u043e\u0440\u0455\u0445\u0443" + (
    "\u0391\u0392\u0395\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a7\u03a5\u0396"
)
_TO_LOOKALIKES = str.maketrans(_LATIN, _LOOKS)
_FROM_LOOKALIKES = str.maketrans(_LOOKS, _LATIN)


def cyrillic_and_greek(text: str) -> str:
    """Each Latin letter that has one as its Cyrillic (lower case) or Greek look-alike."""
    return text.translate(_TO_LOOKALIKES)


def split_by(mark: str) -> Callable[[str], str]:
    """``mark`` inserted every 5 characters."""
    return lambda text: mark.join(text[i : i + 5] for i in range(0, len(text), 5))


def as_read(text: str) -> str:
    """What a reader or a normalising tool sees: NFKC, without format characters, look-alikes
    as the Latin letters they look like."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf").translate(_FROM_LOOKALIKES)


DISGUISES: dict[str, Callable[[str], str]] = {
    "full-width": full_width,
    "math-bold": math_bold,
    "zero-width-space": split_by("\u200b"),
    "zero-width-joiner": split_by("\u200d"),
    "soft-hyphen": split_by("\u00ad"),
    "word-joiner-and-bom": split_by("\u2060\ufeff"),
    "full-width-and-zero-width": lambda text: split_by("\u200b")(full_width(text)),
    "cyrillic-and-greek": cyrillic_and_greek,
    "cyrillic-and-zero-width": lambda text: split_by("\u200b")(cyrillic_and_greek(text)),
}
CASES = load_corpus()
SECRET_CASES = [case for case in CASES if case.secrets]
INNOCENT_CASES = [case for case in CASES if not case.secrets]


def _disguised(case: Case, disguise: Callable[[str], str]) -> str:
    text = case.text
    for secret in sorted(case.secrets, key=len, reverse=True):
        text = text.replace(secret, disguise(secret))
    return text


def _secret_params() -> list[object]:
    # every family of the corpus, in every disguise: one case per family keeps the run short
    firsts = {case.family: case for case in reversed(SECRET_CASES)}
    return [
        pytest.param(case, name, id=f"{case.family}-{name}")
        for case in firsts.values()
        for name in DISGUISES
    ]


@pytest.mark.parametrize(("case", "disguise"), _secret_params())
def test_a_disguised_secret_of_every_family_is_redacted(case: Case, disguise: str) -> None:
    text = _disguised(case, DISGUISES[disguise])
    assert text != case.text
    redacted = redact_secrets(text)
    for secret in case.secrets:
        assert secret not in as_read(redacted)
    assert R in redacted
    assert redact_secrets(redacted) == redacted


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.family}-{n}") for n, c in enumerate(SECRET_CASES)]
)
def test_a_secret_in_a_text_typed_all_in_full_width_is_redacted(case: Case) -> None:
    redacted = redact_secrets(full_width(case.text))
    for secret in case.secrets:
        assert secret not in as_read(redacted)
    assert redact_secrets(redacted) == redacted


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.family}-{n}") for n, c in enumerate(INNOCENT_CASES)]
)
def test_an_innocent_text_typed_in_full_width_survives_byte_for_byte(case: Case) -> None:
    text = full_width(case.text)
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.family}-{n}") for n, c in enumerate(INNOCENT_CASES)]
)
def test_an_innocent_text_typed_in_cyrillic_and_greek_survives_byte_for_byte(case: Case) -> None:
    text = cyrillic_and_greek(case.text)
    assert redact_secrets(text) == text


EXACT = [
    pytest.param(full_width(GH), R, id="full-width-github-token"),
    pytest.param(f"token {full_width(AWS)} here", f"token {R} here", id="full-width-aws-key-id"),
    pytest.param(
        "ｐａｓｓｗｏｒｄ＝ｈｕｎｔｅｒ２２", f"ｐａｓｓｗｏｒｄ＝{R}", id="full-width-key-value"
    ),
    pytest.param("DB_PASSWORD＝Tr0ub4dor&3x", f"DB_PASSWORD＝{R}", id="full-width-equals"),
    pytest.param("api_key： Xq7Rt9Lp2Vn5Kw8Zs4Dm", f"api_key： {R}", id="full-width-colon"),
    pytest.param(
        "ｐａｓｓｗｏｒｄ： ｓ３ｃｒ３ｔＰＷ９\nhost： db",
        f"ｐａｓｓｗｏｒｄ： {R}\nhost： db",
        id="yaml",
    ),
    pytest.param(
        "the password is\u3000Tr0ub4dor3x.", f"the password is\u3000{R}.", id="ideographic-space"
    ),
    pytest.param(
        f"export GITHUB_TOKEN={math_bold(GH)}", f"export GITHUB_TOKEN={R}", id="math-bold"
    ),
    pytest.param(
        f"git clone https://x:{GH[:10]}\u200b{GH[10:]}@github.com/o/r",
        f"git clone https://x:{R}@github.com/o/r",
        id="zero-width-in-url-password",
    ),
    pytest.param(
        f"Authorization：Ｂｅａｒｅｒ {GH}", f"Authorization：Ｂｅａｒｅｒ {R}", id="bearer"
    ),
    pytest.param(
        f"{GH[:8]}\u00ad{GH[8:]} and {GH[:3]}\u2060{GH[3:]}", f"{R} and {R}", id="soft-hyphen"
    ),
    # characters that fold to several ("ﬁ" to "fi", "㎏" to "kg") before, inside and after
    pytest.param(
        "conﬁg ㎏ password=Tr0ﬁub4dor3x ㎏ ﬁn", f"conﬁg ㎏ password={R} ㎏ ﬁn", id="ligatures"
    ),
    pytest.param("secret=Xq7Rt9Lp2Vn5Kw8㎏", f"secret={R}", id="expansion-at-the-end"),
    # a vendor token's span ends at its last character: the marks after it are kept
    pytest.param(
        f"api_key={STRIPE[:21]}\u00ad{STRIPE[21:]}\u0301\u0308 after",
        f"api_key={R}\u0301\u0308 after",
        id="combining-marks-after-a-token",
    ),
    # a value runs on to the next blank: the marks on its last letter are part of it
    pytest.param(
        "api_key=Xq7Rt9Lp2Vn5Kw8Zs4Dm\u0301\u0308 after",
        f"api_key={R} after",
        id="combining-marks-in-a-value",
    ),
    pytest.param(
        f"日本語のメモ：ｔｏｋｅｎ＝{full_width(GH)}（本番用）",
        f"日本語のメモ：ｔｏｋｅｎ＝{R}（本番用）",
        id="japanese-around-a-token",
    ),
    pytest.param(
        f"export GITHUB_TOKEN={GH[:20]}\\\n{GH[20:]}; ａ\\\nb",
        f"export GITHUB_TOKEN={R}; ａ\\\nb",
        id="continuation-kept-elsewhere",
    ),
    pytest.param(
        f"GITHUB_TOKEN={full_width(GH[:20])}＼\n{GH[20:]}",
        f"GITHUB_TOKEN={R}",
        id="full-width-continuation",
    ),
    # a Cyrillic or Greek letter in a prefix or a name; the letters around the secret are kept
    pytest.param(f"gh\u0440{GH[3:]}", R, id="cyrillic-er-in-a-github-prefix"),
    pytest.param(f"key \u0410{AWS[1:]} here", f"key {R} here", id="cyrillic-a-in-aws"),
    pytest.param(f"AK\u0399{AWS[3:]}", R, id="greek-iota-in-aws"),
    pytest.param(f"AK\u0406{AWS[3:]}", R, id="ukrainian-i-in-aws"),
    pytest.param(f"\u0455{STRIPE[1:]}", R, id="macedonian-dze-in-stripe"),
    pytest.param("p\u0430ssword=hunter22x", f"p\u0430ssword={R}", id="cyrillic-a-in-password"),
    pytest.param(
        "\u0440\u0430\u0455\u0455word: Tr0ub4dor&3",
        f"\u0440\u0430\u0455\u0455word: {R}",
        id="cyrillic-pass-in-password",
    ),
    pytest.param(
        "DB_P\u0410SSW\u041eRD=Tr0ub4dor&3x", f"DB_P\u0410SSW\u041eRD={R}", id="upper-case-name"
    ),
    pytest.param(
        "t\u03bfken: Xq7Rt9Lp2Vn5Kw8Zs4Dm", f"t\u03bfken: {R}", id="greek-omicron-in-token"
    ),
    pytest.param(
        "\u0430pi_k\u0435\u0443 = 'Xq7Rt9Lp2Vn5Kw8Zs4Dm'",
        f"\u0430pi_k\u0435\u0443 = '{R}'",
        id="cyrillic-in-api-key",
    ),
    pytest.param(
        f"Токен для CI: gh\u0440{GH[3:]} — не коммитьте его.",
        f"Токен для CI: {R} — не коммитьте его.",
        id="russian-around-a-token",
    ),
    pytest.param(
        "Ο κωδικός: p\u03b1ssword=Tr0ub4dor&3x (άλλαξε).",
        f"Ο κωδικός: p\u03b1ssword={R} (άλλαξε).",
        id="greek-around-a-password",
    ),
]


@pytest.mark.parametrize(("text", "expected"), EXACT)
def test_a_disguised_secret_is_replaced_and_the_original_context_kept(
    text: str, expected: str
) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


INNOCENT = [
    pytest.param("日本語のテキストです。全角の括弧（かっこ）と！？も使います。", id="japanese"),
    pytest.param(
        "価格は１２３，４５６円です。電話：０３－１２３４－５６７８", id="full-width-digits"
    ),
    pytest.param("パスワード：必須（８文字以上）", id="japanese-password-label"),
    pytest.param("ｐａｓｓｗｏｒｄ：ｒｅｑｕｉｒｅｄ", id="full-width-status-word"),
    pytest.param("ｐａｓｓｗｏｒｄ＝＄｛ＤＢ＿ＰＡＳＳＷＯＲＤ｝", id="full-width-placeholder"),
    pytest.param("这是一个中文句子，包含全角标点：逗号、冒号；以及（括号）。", id="chinese"),
    pytest.param("한국어 문장입니다. 비밀번호는 알려주지 마세요!", id="korean"),
    pytest.param("Ｈｅｌｌｏ　Ｗｏｒｌｄ　２０２６", id="full-width-latin"),
    pytest.param("café naïve résumé Zürich Ærøskøbing", id="accented-nfc"),
    pytest.param("cafe\u0301 nai\u0308ve re\u0301sume\u0301", id="accented-nfd"),
    pytest.param("family 👨\u200d👩\u200d👧 👍🏽 ❤️ 🏳️\u200d🌈", id="emoji-sequences"),
    pytest.param(
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u061c", id="persian-arabic-marks"
    ),
    pytest.param("the conﬁguration of the ﬁrst ﬂoor weighs 5 ㎏ … at 20 ℃", id="ligatures"),
    pytest.param("a\u00a0non-breaking space and a\u202fnarrow one, ½ cup, x²", id="compat-prose"),
    pytest.param("soft\u00adhyphen\u00adated long\u200bwords", id="soft-hyphens"),
    pytest.param("𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐 𝕕𝕠𝕦𝕓𝕝𝕖", id="math-letters-prose"),
    pytest.param("\u202eevil\u202c bidi \u2066isolate\u2069", id="bidi-controls"),
    pytest.param("ｔｏｋｅｎ ｃｌ１００ｋ＿ｂａｓｅ ｅｎｃｏｄｉｎｇ", id="full-width-tokenizer"),
    # Russian, Ukrainian, Greek, Serbian, Macedonian, Kazakh: letters that look like Latin ones
    pytest.param(
        "Решили перенести кэш сессий из Redis в Postgres, потому что кластер постоянно"
        " вытеснял ключи под нагрузкой.",
        id="russian-prose",
    ),
    pytest.param(
        "Пароль от тестовой базы лежит в Vault, в репозиторий его не коммитим. Токен для CI"
        " выдаёт администратор.",
        id="russian-password-prose",
    ),
    pytest.param(
        "ВНИМАНИЕ: НЕ ХРАНИТЕ ПАРОЛИ И ТОКЕНЫ В КОДЕ. ИСПОЛЬЗУЙТЕ ПЕРЕМЕННЫЕ ОКРУЖЕНИЯ.",
        id="russian-upper-case",
    ),
    pytest.param(
        "Пароль: обязателен (не менее восьми символов). Секретный ключ: см. менеджер паролей.",
        id="russian-form-labels",
    ),
    pytest.param(
        "Запустите `docker login -u bob` и введите пароль из хранилища; токен GITHUB_TOKEN"
        " задаётся в CI.",
        id="russian-and-commands",
    ),
    pytest.param(
        "Сервер отвечает кодом 401, если срок действия токена истёк; обновите его командой"
        " `make refresh`.",
        id="russian-and-code",
    ),
    pytest.param(
        "Токен доступу зберігається у змінній середовища, а пароль адміністратора — у сховищі"
        " секретів.",
        id="ukrainian-prose",
    ),
    pytest.param(
        "ЕКСПОРТ АКТИВІВ ВИКОНАНО; РЕЄСТР ОНОВЛЕНО; ПОМИЛОК НЕ ВИЯВЛЕНО.", id="ukrainian-upper"
    ),
    pytest.param(
        "Ο κωδικός πρόσβασης της βάσης δεδομένων δεν αποθηκεύεται πια στο αποθετήριο.",
        id="greek-prose",
    ),
    pytest.param(
        "ΠΡΟΣΟΧΗ: ΜΗΝ ΑΠΟΘΗΚΕΥΕΤΕ ΚΩΔΙΚΟΥΣ ΠΡΟΣΒΑΣΗΣ ΣΤΟΝ ΚΩΔΙΚΑ. ΧΡΗΣΙΜΟΠΟΙΗΣΤΕ ΜΕΤΑΒΛΗΤΕΣ.",
        id="greek-upper-case",
    ),
    pytest.param(
        "Η ΑΘΗΝΑ ΚΑΙ Η ΚΡΗΤΗ ΕΙΝΑΙ ΤΑ ΚΥΡΙΑ ΚΕΝΤΡΑ ΤΟΥ ΠΡΟΓΡΑΜΜΑΤΟΣ ΤΟ 2024.",
        id="greek-upper-case-latin-looking",
    ),
    pytest.param(
        "ΑΡΧΕΙΟ ΡΥΘΜΙΣΕΩΝ: config.yaml — ΚΛΕΙΔΙ: api_key — ΤΙΜΗ: ΑΠΟ ΤΟ ΠΕΡΙΒΑΛΛΟΝ",
        id="greek-and-names",
    ),
    pytest.param(
        "def получить_токен(пароль: str) -> str:\n    токен = хэш(пароль + соль)\n    return токен",
        id="python-with-cyrillic-names",
    ),
    pytest.param(
        "Пароль = ПолучитьПароль(Пользователь);\nЕсли ПустаяСтрока(Пароль) Тогда\n"
        '    ВызватьИсключение "Пароль не задан";\nКонецЕсли;',
        id="1c-code",
    ),
    pytest.param(
        "const секрет = process.env.SECRET_KEY; // секретный ключ из окружения", id="js-cyrillic"
    ),
    pytest.param("пароль=${DB_PASSWORD}  # значение подставляется при деплое", id="placeholder"),
    pytest.param(
        "Српски: лозинка је обавезна. Македонски: ѕид, јаже, Ѕвонко.", id="serbian-macedonian"
    ),
    pytest.param("Қазақша: құпия сөз міндетті, һәм үй. Башҡорт: һыу, үҙ.", id="kazakh-bashkir"),
    pytest.param(
        "Commit 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345 исправил тест test_auth_token_expiry.",
        id="russian-and-a-sha",
    ),
    pytest.param(
        "СОСТАВ: АКТИВНЫЕ ВЕЩЕСТВА, ВОДА, СОК, КАРАМЕЛЬ, КРАХМАЛ, АРОМАТИЗАТОР.",
        id="russian-latin-looking-words",
    ),
    pytest.param(
        "Тема: ротация ключей\nСтатус: выполнено\nОтветственный: Сергей Петров\nСрок: 2024-06-01",
        id="russian-fields",
    ),
    pytest.param(
        "Таблица sessions: колонка token_hash хранит SHA-256 от токена, сам токен не сохраняется.",
        id="russian-and-identifiers",
    ),
]


@pytest.mark.parametrize("text", INNOCENT)
def test_innocent_unicode_text_survives_byte_for_byte(text: str) -> None:
    assert redact_secrets(text) == text


def test_a_full_width_named_value_is_redacted_whole() -> None:
    assert redact_named_value("ｐａｓｓｗｏｒｄ", "ｈｕｎｔｅｒ２２ｘ") == R
    assert redact_named_value("password", "Tr0ub\u200b4dor&3") == R
    assert redact_named_value("p\u0430ssword", "hunter22x") == R  # a Cyrillic "a"
    assert redact_named_value("пароль", "Москва") == "Москва"
    assert (
        redact_named_value("ｄａｔａｂａｓｅ", "ＰｏｓｔｇｒｅＳＱＬ １６")
        == "ＰｏｓｔｇｒｅＳＱＬ １６"
    )


# -- Folding and mapping back ----------------------------------------------------------------


def test_plain_text_is_not_folded() -> None:
    assert fold("password=hunter22 and a long note") is None
    assert fold("日本語と café 🙂") is None  # nothing NFKC changes, nothing invisible
    assert fold("Щит, жизнь, лёд") is None  # no letter that looks like a Latin one


def test_cyrillic_and_greek_look_alikes_are_read_as_latin_in_the_folded_copy_only() -> None:
    text = "ghр_ пароль Ο κωδικός"  # a Cyrillic er beside Latin letters: that word only
    folded = fold(text)
    assert folded is not None
    assert folded.text == "ghp_ пароль Ο κωδικός"
    assert folded.source == text
    assert folded.original_span(0, 4) == (0, 4)
    named = fold(text, name=True)  # a name reads them everywhere
    assert named is not None
    assert named.text == "ghp_ пapoль O kωδikός"  # "ό" has an accent: no Latin letter


@pytest.mark.parametrize(
    ("text", "read"),
    [
        pytest.param("Решили перенести кэш сессий в Postgres.", None, id="russian-prose"),
        pytest.param("Ο κωδικός άλλαξε: δες το αρχείο.", None, id="greek-prose"),
        pytest.param(
            "СОСТАВ: ВОДА, СОК.", "COCTAB: ВОДА, СОК.", id="upper-case-name-before-a-colon"
        ),
        pytest.param("p\u0430ssword", "password", id="mixed-word"),
        pytest.param("\u041a\u0415\u0423=x", "KEY=x", id="cyrillic-name-before-equals"),
        pytest.param(
            '"\u041a\u0415\u0423": 1 \u041a\u0415\u0423',
            '"KEY": 1 \u041a\u0415\u0423',
            id="name-before-a-quote",
        ),
        pytest.param("<\u041a\u0415\u0423>", "<KEY>", id="name-before-a-tag-end"),
        pytest.param(
            "\u0410\u0420\u0406_\u041a\u0415\u0423 x", "API_KEY x", id="beside-underscore"
        ),
        pytest.param("\u041a\u0415\u0423 x", None, id="cyrillic-word-alone"),
        pytest.param("файл v2.\u0440y", "файл v2.py", id="beside-a-latin-letter"),
    ],
)
def test_look_alikes_are_read_as_latin_where_one_stands_for_a_latin_letter(
    text: str, read: str | None
) -> None:
    """Russian, Ukrainian or Greek text is read as it is where no look-alike stands beside a
    Latin letter, a digit or "_", or as a name before "=", ":", a quote or ">": reading it twice,
    folded and as it is, would cost it nearly three times as much. Where one does, only its run of
    non-blank characters is read as Latin."""
    folded = fold(text)
    assert (None if folded is None else folded.text) == read
    named = fold(text, name=True)  # a name reads them always
    assert named is not None
    assert named.text == text.translate(LATIN_LOOKALIKES)


def test_the_look_alike_table_reads_cyrillic_and_greek_letters_as_ascii_ones() -> None:
    assert len(LATIN_LOOKALIKES) >= 60
    for code, latin in LATIN_LOOKALIKES.items():
        name = unicodedata.name(chr(code))
        assert name.startswith(("CYRILLIC", "GREEK")), name
        assert unicodedata.category(chr(code)) in ("Lu", "Ll"), name
        assert len(latin) == 1 and latin.isascii() and latin.isalpha(), name
    # capital I forms are "I", which a token's shape needs (confusables.txt's prototype is "l")
    assert {LATIN_LOOKALIKES[code] for code in (0x0399, 0x0406, 0x04C0)} == {"I"}


def test_each_folded_character_maps_back_to_the_whole_character_it_came_from() -> None:
    folded = fold("a㎏ﬁ\u200bｂ")
    assert folded is not None
    assert folded.text == "akgfib"
    assert folded.original_span(2, 3) == (1, 2)  # "g" of "㎏": all of "㎏"
    assert folded.original_span(1, 4) == (1, 3)  # "kgf": "㎏ﬁ"
    assert folded.original_span(4, 6) == (2, 5)  # "ib": "ﬁ", the joiner inside, "ｂ"
    assert folded.original_span(6, 6) == (5, 5)


def _fold_alone(char: str) -> str:
    if _INVISIBLE.match(char):
        return ""
    return char if ord(char) in LATIN_LOOKALIKES else unicodedata.normalize("NFKC", char)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(exclude_characters="\\"), max_size=60))
def test_every_folded_character_maps_back_to_the_character_it_came_from(text: str) -> None:
    expected = "".join(map(_fold_alone, text))
    folded = fold(text)
    if folded is None:
        assert expected == text
        return
    # look-alikes read as Latin letters, one for one, in some runs
    assert len(folded.text) == len(expected)
    assert all(
        got in (want, want.translate(LATIN_LOOKALIKES))
        for got, want in zip(folded.text, expected, strict=True)
    )
    origins = [folded.original_span(i, i + 1)[0] for i in range(len(folded.text))]
    assert origins == sorted(origins)
    read = "".join(_fold_alone(text[j]) for j in dict.fromkeys(origins))
    assert read.translate(LATIN_LOOKALIKES) == folded.text.translate(LATIN_LOOKALIKES)
    assert all(_fold_alone(text[j]) == "" for j in set(range(len(text))) - set(origins))


def test_the_invisible_class_holds_every_format_character() -> None:
    missing = [
        f"U+{code:04X}"
        for code in range(0x110000)
        if unicodedata.category(chr(code)) == "Cf" and not _INVISIBLE.match(chr(code))
    ]
    assert missing == []


def test_replacements_of_replacements_are_followed_back_to_the_first_text() -> None:
    text = "aaaa SECRET bbbb OTHER cc"
    with recording() as notes:
        once = redact_span(text, [(5, 11)])  # "aaaa [REDACTED] bbbb OTHER cc"
        twice = redact_span(once, [(10, 20), (27, 29)])  # "CTED] bbbb" and "cc"
    assert twice == f"aaaa [REDA{R} OTHER {R}"
    regions = replaced_regions(len(text), notes)
    assert regions == [(5, 11), (5, 16), (23, 25)]  # "[REDA" is part of the first replacement
    assert redact_span(text, regions) == f"aaaa {R} OTHER {R}"


PIECES = st.lists(
    st.one_of(
        st.sampled_from(
            [GH, AWS, "password=", "Tr0ub4dor&3", "token: ", "\n", " ", "://u:", "@h/"]
        ),
        st.sampled_from(
            ["ｐａｓｓｗｏｒｄ＝", "＝", "：", "\u200b", "\u00ad", "㎏", "ﬁ", "\u0301"]
        ),
        st.text(max_size=8),
    ),
    max_size=20,
)


@settings(max_examples=300, deadline=None)
@given(PIECES.map("".join), st.sampled_from(list(DISGUISES)))
def test_disguised_random_text_is_a_fixed_point(text: str, disguise: str) -> None:
    once = redact_secrets(DISGUISES[disguise](text))
    assert redact_secrets(once) == once


@settings(max_examples=200, deadline=None)
@given(PIECES.map(" ".join), st.sampled_from(list(DISGUISES)))
def test_a_disguised_token_among_random_words_never_survives(text: str, disguise: str) -> None:
    once = redact_secrets(DISGUISES[disguise](f"{text} {GH} {text}"))
    assert GH not in as_read(once)
    assert redact_secrets(once) == once


# -- Cost ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    [
        pytest.param(full_width("password="), id="full-width-assignments"),
        pytest.param(full_width("ghp_A1"), id="full-width-token-prefixes"),
        pytest.param(full_width("a"), id="full-width-letters"),
        pytest.param("token\u200b", id="zero-width"),
        pytest.param("㎏ﬁ", id="expansions"),
        pytest.param("a\u0301\u0308", id="combining-marks"),
        pytest.param(
            full_width("key=Xq7Rt9Lp2Vn5Kw8Zs4Dm ") + "\u0301" * 40, id="marks-after-secrets"
        ),
        pytest.param("ab\\\n", id="continuations"),
        pytest.param("пароль ", id="cyrillic-words"),
        pytest.param("gh\u0440_A1", id="cyrillic-token-prefixes"),
        pytest.param("p\u0430ssword=", id="cyrillic-assignments"),
        pytest.param("Ο κωδικός ", id="greek-words"),
        pytest.param("\u041a\u0415\u0423", id="one-run-of-look-alikes"),
        pytest.param("\u041a\u0415 ", id="look-alike-words"),
        pytest.param("\u041a\u0415\u0423=", id="look-alike-names"),
        pytest.param(
            '"\u039a\u0395\u03a5": 1, <\u03a4\u039f\u039a\u0395\u039d> ', id="quoted-names"
        ),
        pytest.param("\u0391\u0392" * 30 + "x ", id="long-look-alike-runs"),
        pytest.param(
            "gh\u0440_R4nd\u0301Xy9Zq8Lm2Np5Vt7Wk3Hs6Jd1Fb0Gc4Qa\u00a0", id="glued-tokens"
        ),
        pytest.param("ab\u00a0cd1234567890abcdefgh\u0301 ", id="glue-in-runs"),
        pytest.param("a\u0301" * 40 + "1 ", id="marks-in-long-runs"),
    ],
)
def test_folding_adversarial_input_costs_linear_time(unit: str) -> None:
    """100,000 characters to fold against 12,500."""
    small, large = (unit * (size // len(unit)) for size in (100_000 // GROWTH, 100_000))
    ratio = cpu_ratio(redact_secrets, large, small, runs=5)
    assert ratio < LINEAR_BOUND, f"{ratio:.1f} x (linear: 8 x; quadratic: 64 x)"


# -- Names wholly in look-alikes, marks and no-break spaces inside tokens --------------------

BODY = "R4nd" + "Xy9Zq8Lm2Np5Vt7Wk3Hs6Jd1Fb0Gc4Qa"
PASS = "\u0440\u0430\u0455\u0455\u051d\u043e\u0433\u0501"  # "password" in Cyrillic look-alikes

WHOLLY_LOOKALIKE_NAMES = [
    pytest.param(f'{{"{PASS}": "Hunter2Secret!"}}', f'{{"{PASS}": "{R}"}}', id="json-password"),
    pytest.param(f'{{"{PASS[:4]}": "Hunter2Secret!"}}', f'{{"{PASS[:4]}": "{R}"}}', id="json-pass"),
    pytest.param(
        '{"\u041a\u0415\u04ae": "q8Zr2LmX9vT4pK7nW3sY6hJ1"}',
        f'{{"\u041a\u0415\u04ae": "{R}"}}',
        id="json-key",
    ),
    pytest.param(f"{PASS}='Hunter2Secret!'", f"{PASS}='{R}'", id="quoted-after-equals"),
    pytest.param(f"<{PASS}>Hunter2Secret!</{PASS}>", f"<{PASS}>{R}</{PASS}>", id="xml-element"),
    pytest.param(f"{PASS}: Hunter2Secret!", f"{PASS}: {R}", id="yaml-already-read"),
]


@pytest.mark.parametrize(("text", "expected"), WHOLLY_LOOKALIKE_NAMES)
def test_a_name_written_wholly_in_look_alikes_is_read_before_a_quote_or_a_tag_end(
    text: str, expected: str
) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


GLUE_INSIDE = [
    pytest.param(f"ghp_{BODY[:4]}\u0301{BODY[4:]}", R, id="combining-acute-in-github"),
    pytest.param(f"ghp_{BODY[:4]}\u00a0{BODY[4:]}", R, id="no-break-space-in-github"),
    pytest.param(f"ghp_{BODY[:4]}\u202f{BODY[4:]} x", f"{R} x", id="narrow-no-break-space"),
    pytest.param("A\u0301KIA" + "Z7Q3MEXW4LRT2N5K", R, id="combining-acute-in-aws"),
    pytest.param(
        f"see gh\u0440_{BODY[:9]}\u0308\u00a0{BODY[9:]}.",
        f"see {R}.",
        id="cyrillic-mark-and-no-break-space",
    ),
]


@pytest.mark.parametrize(("text", "expected"), GLUE_INSIDE)
def test_a_mark_or_a_no_break_space_inside_a_token_does_not_hide_it(
    text: str, expected: str
) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("password\u00a0Tr0ub4dor&3", id="password-then-no-break-space"),
        pytest.param("api_key\u00a0Xq7Rt9Lp2Vn5Kw8Zs4Dm", id="name-then-no-break-space"),
    ],
)
def test_a_no_break_space_between_a_name_and_its_value_still_separates_them(text: str) -> None:
    name = text.split("\u00a0")[0]
    assert redact_secrets(text) == f"{name}\u00a0{R}"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("cafe\u0301 nai\u0308ve 10\u00a0km M.\u00a0Dupont", id="prose"),
        pytest.param("re\u0301sume\u0301_v2\u00a0final-2024\u00a0draft", id="file-names"),
        pytest.param(f"ghp\u00a0{BODY}", id="space-after-a-prefix-alone"),
    ],
)
def test_marks_and_no_break_spaces_outside_tokens_are_kept(text: str) -> None:
    assert redact_secrets(text) == text


LOOKALIKE_SIDE_EFFECTS = [
    # Greek capitals elsewhere are not read as a name once one look-alike stands beside Latin
    pytest.param(
        f"\u03a4\u039f\u039a\u0395\u039d \uff38\U0001f44d\U0001f3fd\u03a4\u039f\u039a\u0395\u039d"
        f" gh\u0440_{BODY}",
        f"\u03a4\u039f\u039a\u0395\u039d \uff38\U0001f44d\U0001f3fd\u03a4\u039f\u039a\u0395\u039d"
        f" {R}",
        id="greek-capitals-beside-an-emoji",
    ),
    # the span ends at the token's last character: the emoji sequence after it is kept
    pytest.param(
        f"ghp_{BODY}\ufe0f\u200d\U0001f44d", f"{R}\ufe0f\u200d\U0001f44d", id="emoji-after"
    ),
    pytest.param(f"ghp_{BODY}\u0301 x", f"{R}\u0301 x", id="mark-after"),
]


@pytest.mark.parametrize(("text", "expected"), LOOKALIKE_SIDE_EFFECTS)
def test_only_the_token_goes(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected
