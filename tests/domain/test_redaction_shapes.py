"""Secret shapes left by stop 44, and the prose and code that look like them.

``password: CorrectHorseBatteryStaple`` (a colon, not "="), a passphrase in Title Case at a line's
start or inside a sentence, ``export db_password=Sunshine;`` (one word after a lower-case name),
a bare hex key after a vendor's name in prose, and ``hf_``/``oat_`` names made of words (kept).
The tokens below are split after their prefix so that secret scanners do not flag this file.
"""

from __future__ import annotations

import pytest

from aletheia_mem.domain.redaction import REDACTED, redact_secrets

R = REDACTED
HEX32 = "3f9a8c1d2e4b5a6978c0d1e2f3a4b5c6"
HEX40 = "9c1b7e4d5f60718293a4b5c6d7e8f90123453f2a"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: CorrectHorseBatteryStaple", "CorrectHorseBatteryStaple"),
        ("db:\n  password: CorrectHorseBatteryStaple\n", "CorrectHorseBatteryStaple"),
        ("Password: PurpleMonkeyDishwasher  # prod", "PurpleMonkeyDishwasher"),
        ("- wifi passphrase: CorrectHorse", "CorrectHorse"),
        ("password: Correct Horse Battery Staple", "Correct Horse Battery Staple"),
        ("db_password: Tiger Lamp Orbit Velvet\n", "Tiger Lamp Orbit Velvet"),
    ],
)
def test_a_camel_or_title_case_passphrase_after_a_password_name_and_a_colon_is_redacted(
    text: str, secret: str
) -> None:
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        "class Settings(BaseSettings):\n    password: SecretStr\n",  # type annotations
        "    password: PasswordField",
        "    password: HashedValue\n",
        "    password: OptionalString",
        "    password: ConstrainedStr",
        "    password: LargeBinary",
        "    passphrase: PassphraseInput",
        "  password: UserCredentials\n",
        "password: CorrectHorse;",  # TypeScript: a member's type
        "def login(password: CorrectHorse, user: str) -> None:",
        "password: Hunter",  # one word reads as a class name
        "password: DummyValue",  # placeholders
        "password: YourPasswordHere",
        "password: ChangeMe",
        "token: TokenPayload",  # no password name
        "Password: CamelCase is our naming rule",  # a sentence
        "password: see the vault",
        "Password: Reset Email Template Update",  # a title
        "Password: Strength Meter Redesign Proposal",
        "Password: Rotation Policy For Service Accounts",
        "Password: Correct Horse Battery Staple is the classic xkcd example.",
        "Password: Ask The Team Lead",
        "the password: Correct Horse Battery Staple",  # prose, not a key
        "password: Correct horse Battery staple",  # mixed capitals
        "password_hint: Correct Horse Battery Staple",
    ],
)
def test_code_titles_and_prose_after_a_password_name_and_a_colon_are_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("the password is correct horse battery staple", "correct horse battery staple"),
        ("The wifi password is Correct Horse Battery Staple.", "Correct Horse Battery Staple"),
        ("password is purple monkey dishwasher lamp, ask Bob", "purple monkey dishwasher lamp"),
        ("The passphrase was tiger lamp orbit velvet canyon!", "tiger lamp orbit velvet canyon"),
        (
            "the password for the staging db is correct horse battery staple",
            "correct horse battery staple",
        ),
    ],
)
def test_a_passphrase_of_words_after_password_is_in_a_sentence_is_redacted(
    text: str, secret: str
) -> None:
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in the team vault",
        "the password is the same as on staging",
        "the password is never written down anywhere",
        "the password is rotated monthly by the ops team",
        "the password is too short for our policy",
        "The password is Okta managed now.",
        "the password is correct horse battery staple and it works",  # the words run on
        "the password is required for every prod deploy",
        "the password is case sensitive everywhere though",
        "The password is hashed with bcrypt before storage.",
        "the password is what you set during install",
        "the password is correct horse",  # too short to tell
        "the password hint is correct horse battery staple",  # no password name before "is"
        "The Password Is Correct Horse Battery Staple",  # a title
    ],
)
def test_prose_after_password_is_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("export db_password=Sunshine; ./deploy.sh", "Sunshine"),
        ("export db_password=Sunshine", "Sunshine"),
        ("export password=Sunshine;", "Sunshine"),
        ("cd app && export api_token=Marigold && make", "Marigold"),
    ],
)
def test_one_word_after_export_and_a_lower_case_secret_name_is_redacted(
    text: str, secret: str
) -> None:
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        "password=Sunshine",  # no export: a class as often as not
        "f(password=Sunshine)",
        "export password=Password;",  # names the secret
        "export db_password=ChangeMe;",
        "export api_key=Foo;",  # too short
        "export PASSWORD_FILE=Secrets;",  # no secret name
        "const API_KEY=SomeConst;",
    ],
)
def test_one_word_outside_an_export_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        f"the datadog key {HEX32}",
        f"Datadog key {HEX32} for the prod org",
        f"the sentry key is {HEX32}.",
        f"algolia admin key {HEX32}",
        f"DD app key {HEX40}",
    ],
)
def test_a_bare_hex_key_after_a_vendor_name_in_prose_is_redacted(text: str) -> None:
    secret = HEX40 if HEX40 in text else HEX32
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        f"the key is {HEX32}",  # which key: a cache's as often as not
        f"the cache key {HEX32} was evicted",
        f"cache key is {HEX32}",
        f"primary key {HEX32}",
        f"idempotency key {HEX32}",
        f"the object key {HEX32}",
        f"GPG key {HEX40.upper()}",
        f"the public key {HEX40}",
        f"lookup by key {HEX32}",
        f"the redis key {HEX32} holds the session",  # a store's key: a digest as often as not
        f"the file key {HEX32} in the manifest",
        f"use key {HEX32} for the lookup",
        f"the datadog key id {HEX32}",
        "the datadog key 1234",
        "the datadog key aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ],
)
def test_a_hex_value_after_an_identifier_key_or_no_vendor_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "hf_ThisIsTheConfigurationLoaderForTheWholeApp",
        "see hf_ModelLoaderConfigurationForTransformers in utils.py",
        "oat_ThisIsTheConfigurationLoaderForTheWholeApp",
        "def oat_ModelLoaderConfigurationForTransformersAndMore():",
    ],
)
def test_hf_and_oat_names_made_of_words_are_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "token",
    [
        "hf_" + "OwAJiecAHjIxfihVLEjBWSqLkQgnFCXtkP",
        "hf_" + "hEMkJTSSdYMybXrBejUmSBUqErNMwPwMiW",
        "oat_" + "Xq7kP2mZ9vB4nL8wR3tY6uJ1hG5fD0sA2cE7iO9kLm",
        # random, yet read as words (1 of a million random bodies): a Hugging Face token's length
        "hf_" + "ssaemApwsLGfeeehrbItohGhWaymcIFluM",
    ],
)
def test_hf_and_oat_tokens_are_still_redacted(token: str) -> None:
    assert redact_secrets(f"HF_TOKEN {token} leaked") == f"HF_TOKEN {R} leaked"
