"""Secrets in the shapes an outside check found stored whole, and the innocent texts it found
destroyed (findings F1 to F5, F9, F10 of the secrets check).

Private keys whose lines carry quotes, comment marks, line numbers or diff marks; escaped JSON;
AWS secret keys outside an assignment; a flag between a secret name and its value; name/value
pairs, YAML values on the next line, programs that take a password as an argument, URL-encoded
credentials; invisible characters, line continuations and base64 around a token. And the other
way round: tokenizer names, UUIDs and paths, resource names, form messages and fingerprints are
kept byte for byte. The fake secrets are random and were never valid credentials.
"""

from __future__ import annotations

import base64

import pytest

from aletheia_mem.domain.redaction import REDACTED, redact_secrets

R = REDACTED
PEM_LINES = (
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
)
BEGIN, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"
KEY_LINES = (BEGIN, *PEM_LINES, END)
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9Q8w7e6r5"
GH_TOKEN = "ghp_" + "R4nd0mT0k3nV4lu3Xy9Zq8Wp7Vo6Un5Tm4Sl3K"

PRIVATE_KEYS = [
    pytest.param(
        "KEY = (\n" + "".join(f'    "{line}\\n"\n' for line in KEY_LINES) + ")",
        f'KEY = (\n    "{BEGIN}\\n"\n    "{R}\\n"\n    "{END}\\n"\n)',
        id="python-string-literals",
    ),
    pytest.param(
        "const k = [\n" + ",\n".join(f"  '{line}'" for line in KEY_LINES) + "\n].join('\\n');",
        f"const k = [\n  '{BEGIN}',\n  '{R}',\n  '{END}'\n].join('\\n');",
        id="js-array",
    ),
    pytest.param(
        "\n".join(f"# {line}" for line in KEY_LINES), f"# {BEGIN}\n# {R}\n# {END}", id="comment"
    ),
    pytest.param(
        "\n".join(f"> {line}" for line in KEY_LINES), f"> {BEGIN}\n> {R}\n> {END}", id="quote"
    ),
    pytest.param(
        "\n".join(f"{n:6}→{line}" for n, line in enumerate(KEY_LINES, 1)),
        f"     1→{BEGIN}\n     2→{R}\n     5→{END}",
        id="read-tool-line-numbers",
    ),
    pytest.param(
        "--- a/k.pem\n+++ /dev/null\n@@ -1,5 +0,0 @@\n"
        + "\n".join(f"-{line}" for line in KEY_LINES),
        f"--- a/k.pem\n+++ /dev/null\n@@ -1,5 +0,0 @@\n-{BEGIN}\n-{R}\n-{END}",
        id="diff-removing-a-key",
    ),
    pytest.param(
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: Alice <alice@example.com>\n\n"
        + "\n".join(PEM_LINES)
        + "\n=Ab3d\n-----END PGP PRIVATE KEY BLOCK-----",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{R}\n-----END PGP PRIVATE KEY BLOCK-----",
        id="pgp-armor-headers",
    ),
    pytest.param("<br>".join(KEY_LINES), f"{BEGIN}<br>{R}<br>{END}", id="html-br"),
    pytest.param(
        "\n".join(f"# {line}" for line in KEY_LINES[:3]) + "\n# (cut)\nnext line",
        f"# {BEGIN}\n# {R}\n# (cut)\nnext line",
        id="truncated-with-comment-marks",
    ),
]

SECRETS = [
    # F2: escaped JSON
    pytest.param(
        '{"level":"info","body":"{\\"password\\": \\"Tr0ub4dor3xyz\\", '
        '\\"api_key\\": \\"9f8e7d6c5b4a39281706f5e4d3c2b1a0\\"}"}',
        f'{{"level":"info","body":"{{\\"password\\": \\"{R}\\", \\"api_key\\": \\"{R}\\"}}"}}',
        id="escaped-json",
    ),
    pytest.param(
        '{"msg":"{\\\\\\"password\\\\\\": \\\\\\"Tr0ub4dor3xyz\\\\\\"}"}',
        f'{{"msg":"{{\\\\\\"password\\\\\\": \\\\\\"{R}\\\\\\"}}"}}',
        id="json-escaped-twice",
    ),
    # F3: AWS secret access keys outside an assignment
    pytest.param(
        f"aws configure set aws_secret_access_key {AWS_SECRET}",
        f"aws configure set aws_secret_access_key {R}",
        id="aws-configure-set",
    ),
    pytest.param(
        "Access key ID,Secret access key\n"
        "AKIAZ7Q4XK2MB3WEVF5N,wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9Q8w7e6r6",
        f"Access key ID,Secret access key\n{R},{R}",
        id="aws-console-csv",
    ),
    pytest.param(
        f"| name | value |\n|---|---|\n| AWS_SECRET_ACCESS_KEY | {AWS_SECRET} |",
        f"| name | value |\n|---|---|\n| AWS_SECRET_ACCESS_KEY | {R} |",
        id="aws-markdown-table",
    ),
    pytest.param(
        f"the aws secret access key is {AWS_SECRET}",
        f"the aws secret access key is {R}",
        id="aws-prose",
    ),
    pytest.param(
        f"rclone config create s3 s3 secret_access_key {AWS_SECRET}",
        f"rclone config create s3 s3 secret_access_key {R}",
        id="rclone",
    ),
    pytest.param(
        "set -x OPENAI_API_KEY 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        f"set -x OPENAI_API_KEY {R}",
        id="fish-set",
    ),
    # F4: a flag between the secret's name and its value
    pytest.param(
        "aws ssm put-parameter --name /prod/db/password --value Tr0ub4dor3xyzS --type SecureString",
        f"aws ssm put-parameter --name /prod/db/password --value {R} --type SecureString",
        id="ssm-put-parameter",
    ),
    pytest.param(
        "gh secret set DB_PASSWORD --body Tr0ub4dor3xyzG",
        f"gh secret set DB_PASSWORD --body {R}",
        id="gh-secret-set",
    ),
    # F5: name/value pairs, next-line values, programs, SQL, calls, URLs
    pytest.param(
        "env:\n  - name: DB_PASSWORD\n    value: Tr0ub4dor3xyzK",
        f"env:\n  - name: DB_PASSWORD\n    value: {R}",
        id="kubernetes-env",
    ),
    pytest.param(
        '"environment": [{"name": "DB_PASSWORD", "value": "Tr0ub4dor3xyzE"}]',
        f'"environment": [{{"name": "DB_PASSWORD", "value": "{R}"}}]',
        id="ecs-environment",
    ),
    pytest.param("password: |\n  Tr0ub4dor3xyzY", f"password: |\n  {R}", id="yaml-block"),
    pytest.param(
        "password:\n  Tr0ub4dor3xyzY\nuser: bob", f"password:\n  {R}\nuser: bob", id="yaml-next"
    ),
    pytest.param(
        "htpasswd -b -c .htpasswd admin Tr0ub4dor3xyzH",
        f"htpasswd -b -c .htpasswd admin {R}",
        id="htpasswd",
    ),
    pytest.param("htpasswd -nb admin Tr0ub4dor3xyzH", f"htpasswd -nb admin {R}", id="htpasswd-n"),
    pytest.param("mongo -u admin -p Tr0ub4dor3xyzM", f"mongo -u admin -p {R}", id="mongo"),
    pytest.param(
        "ldapsearch -x -D cn=admin -w Tr0ub4dor3xyzL",
        f"ldapsearch -x -D cn=admin -w {R}",
        id="ldapsearch",
    ),
    pytest.param(
        "smbclient -U admin%Tr0ub4dor3xyzB //host/share",
        f"smbclient -U admin%{R} //host/share",
        id="smbclient",
    ),
    pytest.param(
        "net user admin Tr0ub4dor3xyz /add", f"net user admin {R} /add", id="windows-net-user"
    ),
    pytest.param(
        "CREATE USER 'app'@'%' IDENTIFIED BY 'Tr0ub4dor3xyzC';",
        f"CREATE USER 'app'@'%' IDENTIFIED BY '{R}';",
        id="sql-identified-by",
    ),
    pytest.param(
        'os.environ.setdefault("DB_PASSWORD", "Tr0ub4dor3xyzO")',
        f'os.environ.setdefault("DB_PASSWORD", "{R}")',
        id="call-setdefault",
    ),
    pytest.param(
        'config.set("api_key", "9f8e7d6c5b4a39281706f5e4d3c2b1a0")',
        f'config.set("api_key", "{R}")',
        id="call-set",
    ),
    pytest.param(
        "git clone https://4c5f1a9e7b2d3c8f0e6a5b4d9c1e2f3a7b8c9d0e@github.com/org/repo.git",
        f"git clone https://{R}@github.com/org/repo.git",
        id="hex-token-as-url-user",
    ),
    pytest.param(
        "next=https%3A%2F%2Falice%3ASup3rS3cret9%40api.example.com%2Fv1",
        f"next=https%3A%2F%2Falice%3A{R}%40api.example.com%2Fv1",
        id="url-encoded-credentials",
    ),
    # F9: invisible characters, line continuations, base64
    pytest.param(
        "ghp_R4nd0mT0k3nV4lu3\u200bXy9Zq8Wp7Vo6Un5Tm4Sl3K", R, id="zero-width-space-in-token"
    ),
    pytest.param(
        "export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3\\\nXy9Zq8Wp7Vo6Un5Tm4Sl3K",
        f"export GITHUB_TOKEN={R}",
        id="line-continuation",
    ),
    pytest.param(
        f"echo {base64.b64encode(GH_TOKEN.encode()).decode()} | base64 -d",
        f"echo {R} | base64 -d",
        id="base64-wrapped-token",
    ),
]

INNOCENT = [
    # found by the review of these rules: prose and commands that name no password
    pytest.param("Each cart is identified by its session cookie", id="identified-by-prose"),
    pytest.param("Problems identified by Coverity are fixed", id="identified-by-tool"),
    pytest.param("docker run --name some-mongo -p 27017:27017 -d mongo:7", id="docker-mongo"),
    pytest.param("docker run --name mongo-express -p 8081:8081 mongo-express", id="mongo-express"),
    pytest.param("Our net user growth was strong", id="net-user-prose"),
    pytest.param(
        "redirect=https%3A%2F%2Fexample.com%3A8443%2Fcallback%40home", id="encoded-port-path"
    ),
    # F10
    pytest.param("Tokens in the LLM: cl100k_base encoding", id="tokenizer-prompt"),
    pytest.param("token gpt-4o-mini costs less than gpt-4o", id="model-after-token"),
    pytest.param("token: cl100k_base", id="tokenizer-assignment"),
    pytest.param("Token for embeddings: text-embedding-3-small", id="embedding-model"),
    pytest.param("token o200k_base is used by gpt-4o", id="tokenizer-prose"),
    pytest.param("S3 key: uploads/2024/01/report-9f8e7d6c.pdf", id="object-key-path"),
    pytest.param("dedupe key: 550e8400-e29b-41d4-a716-446655440000", id="uuid-key"),
    pytest.param("Idempotency-Key: 550e8400-e29b-41d4-a716-446655440000", id="idempotency"),
    pytest.param("primary_key: 550e8400-e29b-41d4-a716-446655440000", id="primary-key"),
    pytest.param("session: 01ARZ3NDEKTSV4RRFFQ69G5FAV", id="ulid-session"),
    pytest.param("secret: projects/my-proj/secrets/db-pass/versions/latest", id="gcp-secret"),
    pytest.param("Password: required", id="form-message"),
    pytest.param("https://example.com/reset?token=expired", id="expired-token"),
    pytest.param("GPG key: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88", id="gpg-fingerprint"),
    pytest.param("the secret to fast builds is caching2x layers", id="secret-to-idiom"),
    pytest.param(
        "mapbox public token pk.eyJ1IjoiYWRhIiwiYSI6ImNqeDl6eTAwMDAwMDAifQ.Zm9vYmFy",
        id="public-token",
    ),
    # look-alikes of the new shapes
    pytest.param("key commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 broke it", id="sha"),
    pytest.param('fields = ("password", "password_confirmation")', id="call-names"),
    pytest.param('x = ("password", "username")', id="call-words"),
    pytest.param("secretKeyRef:\n  name: db-credentials\n  key: password", id="secret-ref"),
    pytest.param("credentials:\n  username: admin", id="yaml-nested-mapping"),
    pytest.param(
        "env:\n  - name: LOG_LEVEL\n    value: debug\n  - name: API_TOKEN\n    valueFrom: {}",
        id="env-without-secret-value",
    ),
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\nThe next paragraph is about configuration management.",
        id="prose-after-a-begin-line",
    ),
    pytest.param("if token:\n    refresh()\nif not password:\n    raise ValueError", id="code"),
    pytest.param('key = "password"\nvalue = form.get(key)', id="pair-in-code"),
    pytest.param("htpasswd -c .htpasswd admin", id="htpasswd-prompting"),
    pytest.param("net user admin * /add", id="net-user-prompting"),
    pytest.param("ps -U root%cpu", id="percent-not-smb"),
    pytest.param("wc -w file.txt", id="short-w-flag"),
    pytest.param("password --help", id="flag-after-password"),
    pytest.param("ssh://git@github.com/org/repo.git", id="url-user"),
    pytest.param("next=https%3A%2F%2Fapi.example.com%2Fv1%3Fa%3Db%40c", id="encoded-url"),
    pytest.param(
        "./configure --prefix=/usr/local/something\\\n--enable-feature-xyz", id="continuation"
    ),
    pytest.param("a long\u200bword and sh\u200bop", id="zero-width-kept-without-a-secret"),
    pytest.param(
        "family 👨\u200d👩\u200d👧 and \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        id="joiners",
    ),
    pytest.param(
        "-----BEGIN CERTIFICATE-----\n"
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
        "-----END CERTIFICATE-----",
        id="certificate",
    ),
    pytest.param(
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", id="b64"
    ),
]


@pytest.mark.parametrize(("text", "expected"), PRIVATE_KEYS)
def test_a_private_key_is_redacted_whatever_its_lines_carry(text: str, expected: str) -> None:
    redacted = redact_secrets(text)
    assert redacted == expected
    assert not any(line[8:40] in redacted for line in PEM_LINES)


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_secret_in_a_new_shape_is_replaced_and_its_context_kept(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize("text", INNOCENT)
def test_innocent_text_survives_byte_for_byte(text: str) -> None:
    assert redact_secrets(text) == text


def test_a_secret_glued_to_a_public_name_is_redacted_with_it_the_first_time() -> None:
    text = "password=Tr0ub4dor3xyzGGPG key: 9DC858229FC7DD38854AE2D88D81803C0EBFCD88"
    once = redact_secrets(text)
    assert once == "password=[REDACTED] key: [REDACTED]"
    assert redact_secrets(once) == once


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("CREATE USER 'app'@'%'\n  IDENTIFIED BY 'Tr0ub4dor3xyzC';", id="two-lines"),
        pytest.param("ALTER ROLE app WITH LOGIN identified by Tr0ub4dor3xyzQ", id="alter-role"),
        pytest.param("Connect with mongo -u admin -p Tr0ub4dor3xyzM", id="mongo-in-prose"),
        pytest.param("C:\\> net user admin Tr0ub4dor3xyz /add", id="net-user-prompt"),
    ],
)
def test_the_reviewed_rules_still_find_their_secret(text: str) -> None:
    assert "Tr0ub4dor3xyz" not in redact_secrets(text)


@pytest.mark.parametrize(
    "text",
    [*(p.values[0] for p in (*PRIVATE_KEYS, *SECRETS)), *(p.values[0] for p in INNOCENT)],
)
def test_redacting_twice_gives_the_same_result(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("-----BEGIN PRIVATE KEY-----\n# " * 600, id="pem-begin-lines"),
        pytest.param("# MIIEowIBAAKCAQEAu1SU1L\n" * 800, id="key-lines-without-begin"),
        pytest.param('x\\"' * 6_000, id="escaped-quotes"),
        pytest.param('\\"password\\": \\"' * 1_200, id="escaped-assignments"),
        pytest.param("value: Tr0ub4dor3 " * 1_000, id="values"),
        pytest.param("- name: password\n  value: " * 700, id="name-value-pairs"),
        pytest.param("password:\n  " * 1_500, id="next-line-values"),
        pytest.param('("password", "' * 1_400, id="call-pairs"),
        pytest.param("secret access key is " * 900, id="spaced-names"),
        pytest.param("%3A%2F%2Fa%3A" * 1_500, id="encoded-urls"),
        pytest.param("htpasswd -b " * 1_600, id="htpasswd"),
        pytest.param("token\u200b" * 3_000, id="zero-width"),
        pytest.param("abcdefgh\\\n" * 2_000, id="continuations"),
        pytest.param("Z2hwX1I0bmQwbVQwazNuVjRsdTNY" * 700, id="base64-run"),
    ],
)
def test_adversarial_input_of_the_new_shapes_is_a_fixed_point(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once
