"""Tests for secret redaction.

The fake tokens below are split after their vendor prefix ("ghp_" + "...") so that secret
scanners do not flag this file; the values are random and were never valid credentials.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain.redaction import REDACTED, redact_secrets
from tests.cost import GROWTH, LINEAR_BOUND, cpu_ratio

R = REDACTED
GH_BODY = "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"  # 36 characters, like a real GitHub token
SLACK_BODY = "2873640519-4829501736284-g8xNbe3nNyjOq9wMxEhh2FDE"
OPENAI_BODY = "1aE6PwZPf1Qh6yYTWmE4lBYOvfZ8UzDzV8fUkkibjL5DZPjN"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSIsImlhdCI6MTUxNjIzOTAyMn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = (
    "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aFDrBz9vFqU4yV5Ld2f0bmE3Gk8L1ZwP3nQ0kRr6XbmTnA8sV2q4w1yXe7cUj9Kh\n"
    "3LzW0dQ8mYpB+v/5hN2tR1sK9gF4eJ7cA6bX0zV3uI8oP2lM5nQ4rS7tU1wY9xZ="
)


def pem(kind: str, body: str = PEM_BODY) -> str:
    label = f"{kind} PRIVATE KEY".strip()
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


SECRETS = [
    # Two URLs with no blank between them: neither password may hide the other's
    pytest.param(
        "postgres://a:Bigpass9@h/x=https://u:Pw2secret@host/",
        f"postgres://a:{R}@h/x=https://u:{R}@host/",
        id="url-then-url",
    ),
    pytest.param(
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/prod"
        "spring.datasource.password=sprIng2024https://user@example.com/path",
        f"DATABASE_URL=postgres://app:{R}@db.internal:5432/prodspring.datasource.password={R}",
        id="url-run-into-an-assignment-and-a-url",
    ),
    # AWS
    pytest.param(
        "aws_access_key_id = AKIAZ7Q3MEXW4LRT2N5K", "aws_access_key_id = " + R, id="aws-key-id"
    ),
    pytest.param(
        "export AWS_ACCESS_KEY_ID=ASIAY34FZKBOKMUTVV7A",
        "export AWS_ACCESS_KEY_ID=" + R,
        id="aws-session-key-id",
    ),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYz8Q3rT5vKw",
        "aws_secret_access_key = " + R,
        id="aws-secret-ini",
    ),
    pytest.param(
        'AWS_SECRET_ACCESS_KEY: "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbQ4rT8mZ2sL"',
        f'AWS_SECRET_ACCESS_KEY: "{R}"',
        id="aws-secret-yaml",
    ),
    pytest.param(
        "The leaked key was AKIAZ7QWERTYUIOP1234 in the CI log.",
        f"The leaked key was {R} in the CI log.",
        id="aws-key-id-in-prose",
    ),
    # GitHub
    pytest.param("GITHUB_TOKEN=" + "ghp_" + GH_BODY, "GITHUB_TOKEN=" + R, id="github-ghp"),
    pytest.param(
        "git clone https://" + "gho_" + GH_BODY + "@github.com/acme/api.git",
        f"git clone https://{R}@github.com/acme/api.git",
        id="github-gho-in-url",
    ),
    pytest.param(
        "use " + "ghu_" + GH_BODY + " for the app", f"use {R} for the app", id="github-ghu"
    ),
    pytest.param("ghs_" + GH_BODY, R, id="github-ghs"),
    pytest.param(f'refresh: "{"ghr_" + GH_BODY}"', f'refresh: "{R}"', id="github-ghr"),
    pytest.param(
        "github_pat_" + "11ABCDEFG0i0B3JrTAwR4y_9ojfljoQoaF1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzz",
        R,
        id="github-fine-grained-pat",
    ),
    # GitLab, Slack
    pytest.param("CI_TOKEN: " + "glpat-" + "zgEOzdmenCkhvMdgaKjI", "CI_TOKEN: " + R, id="gitlab"),
    pytest.param("xoxb-" + SLACK_BODY, R, id="slack-bot"),
    pytest.param(
        "slack user token " + "xoxp-" + SLACK_BODY, "slack user token " + R, id="slack-user"
    ),
    pytest.param("xoxa-" + SLACK_BODY, R, id="slack-app"),
    pytest.param("(xoxs-" + SLACK_BODY + ")", f"({R})", id="slack-session"),
    pytest.param(
        "curl -X POST https://hooks.slack.com/services/"
        + "T024BE7LD/B08A1RT3W/EtfjgVvVqE1SkHbn88Hx",
        f"curl -X POST https://hooks.slack.com/services/{R}",
        id="slack-webhook",
    ),
    # Stripe, OpenAI, Anthropic, Google, npm
    pytest.param(
        "STRIPE_KEY=" + "sk_live_" + "bWHtP3fS2qHx6kwXoIIXGvOo", "STRIPE_KEY=" + R, id="stripe"
    ),
    pytest.param("rk_live_" + "NZYW2mZp0zVZomHFwUbbYrEq", R, id="stripe-restricted"),
    pytest.param(
        "stripe.api_key = '" + "sk_test_" + "mSM9wCZ7Uw9xfogoEmvnEN5N" + "'",
        f"stripe.api_key = '{R}'",
        id="stripe-test",
    ),
    pytest.param("OPENAI_API_KEY=" + "sk-" + OPENAI_BODY, "OPENAI_API_KEY=" + R, id="openai"),
    pytest.param(
        'client = OpenAI(api_key="'
        + "sk-proj-"
        + "0MEQ7wjJJibaZ_UPgHV7iB3m-03nbqnsGpWLuqIA1i"
        + '")',
        f'client = OpenAI(api_key="{R}")',
        id="openai-project",
    ),
    pytest.param(
        "sk-ant-"
        + "api03-d6Vw5DQL05HA064GiIjHGb3CXlMaXZjljENUhJduRHHJEYXg4Jdpmrc-XgGCJbW56eCuNGMG",
        R,
        id="anthropic",
    ),
    pytest.param(
        "maps?key=" + "AIza" + "SyJ58m1CiAhzCueQpBenQtYh5Xj8TPQxjq4",
        "maps?key=" + R,
        id="google",
    ),
    pytest.param(
        "//registry.npmjs.org/:_authToken=" + "npm_" + "DoV8gz4FkQ1okTBGzvAmwufUxbvJDCTbyvHN",
        "//registry.npmjs.org/:_authToken=" + R,
        id="npm",
    ),
    # JWT
    pytest.param(JWT, R, id="jwt"),
    pytest.param(
        f'{{"id_token": "{JWT}", "ok": true}}', f'{{"id_token": "{R}", "ok": true}}', id="jwt-json"
    ),
    # PEM private keys
    pytest.param(pem("RSA"), pem("RSA", R), id="pem-rsa"),
    pytest.param(
        "key:\n" + pem("OPENSSH") + "\nthen more notes",
        "key:\n" + pem("OPENSSH", R) + "\nthen more notes",
        id="pem-openssh",
    ),
    pytest.param(pem("EC"), pem("EC", R), id="pem-ec"),
    pytest.param(pem(""), pem("", R), id="pem-pkcs8"),
    pytest.param(pem("ENCRYPTED"), pem("ENCRYPTED", R), id="pem-encrypted"),
    pytest.param(
        '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\nkqhkiG9w0B==\\n'
        '-----END PRIVATE KEY-----\\n"}',
        '{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + R + '\\n-----END PRIVATE KEY-----\\n"}',
        id="pem-in-json",
    ),
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\naFDrBz9vFqU4yV5\n"
        "\nThe rest was cut.",
        f"-----BEGIN RSA PRIVATE KEY-----\n{R}\n\nThe rest was cut.",
        id="pem-truncated",
    ),
    # Passwords in URLs
    pytest.param(
        "DATABASE_URL=postgres://app:s3cr3t-Pa55@db.internal:5432/prod",
        f"DATABASE_URL=postgres://app:{R}@db.internal:5432/prod",
        id="url-postgres",
    ),
    pytest.param(
        "postgresql://admin:hunter2@localhost/db",
        f"postgresql://admin:{R}@localhost/db",
        id="url-postgresql",
    ),
    pytest.param(
        "mysql://root:Tr0ub4dor&3@127.0.0.1:3306/shop",
        f"mysql://root:{R}@127.0.0.1:3306/shop",
        id="url-mysql",
    ),
    pytest.param(
        'uri = "mongodb+srv://svc:Zx9%40pQ@cluster0.ab1cd.mongodb.net/app?retryWrites=true"',
        f'uri = "mongodb+srv://svc:{R}@cluster0.ab1cd.mongodb.net/app?retryWrites=true"',
        id="url-mongodb-srv",
    ),
    pytest.param("redis://:r3d1sPass@cache:6379/0", f"redis://:{R}@cache:6379/0", id="url-redis"),
    pytest.param("amqp://guest:rabbitPW1@mq//", f"amqp://guest:{R}@mq//", id="url-amqp"),
    pytest.param(
        "pip install -i https://deploy:gl4bKey99@pypi.acme.dev/simple pkg",
        f"pip install -i https://deploy:{R}@pypi.acme.dev/simple pkg",
        id="url-https",
    ),
    # HTTP authorization
    pytest.param(
        "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "Authorization: Bearer " + R,
        id="bearer-header",
    ),
    pytest.param(
        "curl -H 'Authorization: bearer AbCdEf0123456789GhIjKl' https://api.acme.dev",
        f"curl -H 'Authorization: bearer {R}' https://api.acme.dev",
        id="bearer-curl",
    ),
    pytest.param("token was Bearer x7Kq93LmPz02VbNw", "token was Bearer " + R, id="bearer-bare"),
    pytest.param(
        "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic " + R, id="basic-auth"
    ),
    # Assignments to secret-looking names
    pytest.param("password=hunter22!", "password=" + R, id="password-env"),
    pytest.param('DB_PASSWORD="Tr0ub4dor&3"', f'DB_PASSWORD="{R}"', id="password-quoted"),
    pytest.param(
        "  password: s3cr3tP@ss  # prod\n", f"  password: {R}  # prod\n", id="password-yaml"
    ),
    pytest.param('{"api_key": "abcd1234efgh5678"}', f'{{"api_key": "{R}"}}', id="api-key-json"),
    pytest.param("export SERVICE_TOKEN=tok_8Hq2Lm", "export SERVICE_TOKEN=" + R, id="token-export"),
    pytest.param("client_secret: 'q8W-e3R_t5Y'", f"client_secret: '{R}'", id="client-secret"),
    pytest.param("private_key = 'MC4CAQAwBQYDK2VwBCIE'", f"private_key = '{R}'", id="private-key"),
    pytest.param("passwd=letmein99", "passwd=" + R, id="passwd"),
    pytest.param("mysql -u root --pwd=Qwerty123", "mysql -u root --pwd=" + R, id="pwd-flag"),
    pytest.param('APIKEY := "0f9e8d7c6b5a"', f'APIKEY := "{R}"', id="apikey-go"),
    pytest.param("credential => 'cr3d-v4lue'", f"credential => '{R}'", id="credential-php"),
    pytest.param("SECRET_KEY = 'django-insecure-4x7'", f"SECRET_KEY = '{R}'", id="secret-key"),
    pytest.param("X-Api-Key: 7c1e2d9f0a3b", "X-Api-Key: " + R, id="api-key-header"),
    pytest.param("/v1/items?api_key=abc123def&page=2", f"/v1/items?api_key={R}&page=2", id="query"),
    pytest.param(
        "spring.datasource.password=sprIng2024", "spring.datasource.password=" + R, id="java-props"
    ),
    pytest.param("Fixed: password=hunter22 leaked", f"Fixed: password={R} leaked", id="in-prose"),
    pytest.param("key=a8Kd93LmQ2xZp7Vb", "key=" + R, id="weak-key-random"),
    pytest.param('KEY: "Zx81Qw73Er65Ty49Ui"', f'KEY: "{R}"', id="weak-key-upper"),
    pytest.param("auth=Q2x9LmP0zR7kT4wV", "auth=" + R, id="weak-auth-random"),
    pytest.param(
        "DB_USER=app\nDB_PASSWORD=pa55word!\nDEBUG=true\nAPI_TOKEN='t0k3n-v4lue'\n",
        f"DB_USER=app\nDB_PASSWORD={R}\nDEBUG=true\nAPI_TOKEN='{R}'\n",
        id="env-file",
    ),
    # Subscript assignments
    pytest.param(
        'os.environ["DB_PASSWORD"] = "S3cr3tP4ss"',
        f'os.environ["DB_PASSWORD"] = "{R}"',
        id="subscript-environ",
    ),
    pytest.param(
        'creds["password"] = "Hunt3rPass99"', f'creds["password"] = "{R}"', id="subscript-dict"
    ),
    pytest.param(
        "config['apiKey'] = 'Gx7kP2mQ9rTs4vWy8zAb3cDe5fGh'",
        f"config['apiKey'] = '{R}'",
        id="subscript-single-quotes",
    ),
    pytest.param("ENV['API_TOKEN']='t0k3n-v4lue'", f"ENV['API_TOKEN']='{R}'", id="subscript-tight"),
    # Quoted passphrases given to password names
    pytest.param(
        '{"password": "correct horse battery staple"}',
        f'{{"password": "{R}"}}',
        id="passphrase-json",
    ),
    pytest.param('DB_PASSWORD="My Dog Rex 2019!"', f'DB_PASSWORD="{R}"', id="passphrase-dotenv"),
    pytest.param(
        "password: 'correct horse battery staple'", f"password: '{R}'", id="passphrase-yaml"
    ),
    # Unquoted passwords run to the blank; a query string's "&" starts the next parameter
    pytest.param("password=Tr0ub4dor&3", "password=" + R, id="password-ampersand"),
    pytest.param("password=Tr0ub4dor&3 was leaked", f"password={R} was leaked", id="amp-prose"),
    pytest.param("DB_PASSWORD=Tr0ub;4dor)x\n", f"DB_PASSWORD={R}\n", id="password-semicolon"),
    pytest.param("key=Xq7Lm2Pz9Rt4Vw8K&3", "key=" + R, id="weak-key-ampersand"),
    pytest.param(
        "https://app.example.com/login?password=Tr0ub4dor3&user=bob",
        f"https://app.example.com/login?password={R}&user=bob",
        id="query-password-then-parameter",
    ),
    pytest.param(
        "Server=db;Password=Tr0ub4dor3;Database=shop",
        f"Server=db;Password={R};Database=shop",
        id="odbc-password-then-parameter",
    ),
    # IPv6 hosts
    pytest.param(
        "postgres://admin:S3cr3tP4ss@[2001:db8::1]:5432/prod",
        f"postgres://admin:{R}@[2001:db8::1]:5432/prod",
        id="url-ipv6",
    ),
    pytest.param(
        "mysql://root:S3cr3tP4ss@[fe80::1%25eth0]/shop",
        f"mysql://root:{R}@[fe80::1%25eth0]/shop",
        id="url-ipv6-zone",
    ),
    # Cookie headers: the cookies, not their attributes
    pytest.param(
        "Set-Cookie: session=abc123def456; Path=/; HttpOnly; SameSite=Strict",
        f"Set-Cookie: session={R}; Path=/; HttpOnly; SameSite=Strict",
        id="set-cookie",
    ),
    pytest.param(
        "Cookie: theme=dark; sessionid=abc123def; csrftoken=Xq7Lm2Pz9Rt4Vw8KpQ",
        f"Cookie: theme=dark; sessionid={R}; csrftoken={R}",
        id="cookie",
    ),
    pytest.param(
        'curl -H "Cookie: sid=s%3Aabc123.xyz" https://a.example.com',
        f'curl -H "Cookie: sid={R}" https://a.example.com',
        id="cookie-curl",
    ),
    pytest.param(
        'document.cookie = "session=abc123def; path=/"',
        f'document.cookie = "session={R}; path=/"',
        id="cookie-javascript",
    ),
    # .pgpass lines, prompts, Terraform, --password-stdin
    pytest.param("host:5432:db:user:S3cr3tP4ssw0rd", f"host:5432:db:user:{R}", id="pgpass"),
    pytest.param(
        "# ~/.pgpass\n*:*:*:postgres:S3cr3t\\:P4ss\n",
        f"# ~/.pgpass\n*:*:*:postgres:{R}\n",
        id="pgpass-wildcards-escaped-colon",
    ),
    pytest.param(
        "Password for admin: S3cr3tP4ssw0rd", f"Password for admin: {R}", id="prompt-password"
    ),
    pytest.param(
        'variable "db_password" { default = "S3cr3tP4ss" }',
        f'variable "db_password" {{ default = "{R}" }}',
        id="terraform-default",
    ),
    pytest.param(
        'variable "api_token" {\n  type    = string\n  default = "t0k3n-v4lue"\n}',
        f'variable "api_token" {{\n  type    = string\n  default = "{R}"\n}}',
        id="terraform-block",
    ),
    pytest.param(
        "echo S3cr3tP4ssw0rd | docker login --password-stdin",
        f"echo {R} | docker login --password-stdin",
        id="password-stdin",
    ),
    pytest.param(
        "printf '%s' 'S3cr3tP4ss' | helm registry login ghcr.io -u bob --password-stdin",
        f"printf '%s' {R} | helm registry login ghcr.io -u bob --password-stdin",
        id="password-stdin-printf",
    ),
]

INNOCENT = [
    # the placeholders of vendors' documentation, exactly as written there (gitleaks keeps them)
    pytest.param("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", id="aws-documented-key-id"),
    pytest.param(
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        id="aws-documented-secret",
    ),
    pytest.param(
        "AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", id="aws-documented-csv"
    ),
    pytest.param(
        'AWS_SECRET_ACCESS_KEY: "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"',
        id="aws-documented-second-secret",
    ),
    pytest.param("SLACK_BOT_TOKEN=xoxb-your-token-here", id="slack-placeholder"),
    pytest.param("token hello\u00adworld", id="soft-hyphen-in-a-word-after-token"),
    pytest.param("Reset the password in the admin panel.", id="prose-password"),
    pytest.param("The token bucket rate limiter refills every second.", id="prose-token"),
    pytest.param("The API key is stored in the vault; ask #infra for access.", id="prose-api-key"),
    pytest.param("Session token: expired after an hour, log in again.", id="prose-colon"),
    pytest.param("Bearer tokens must only be sent over HTTPS.", id="prose-bearer"),
    pytest.param("password=", id="empty"),
    pytest.param("password=\nuser=admin", id="empty-then-line"),
    pytest.param("password=${DB_PASSWORD}", id="env-reference"),
    pytest.param("password: $PASSWORD", id="shell-variable"),
    pytest.param("token=<your-token>", id="angle-placeholder"),
    pytest.param('api_key = "your_api_key_here"', id="your-placeholder"),
    pytest.param("password=changeme", id="changeme"),
    pytest.param("password: ********", id="mask"),
    pytest.param('password: "{{ vault_db_password }}"', id="jinja"),
    pytest.param("token: ${{ secrets.GITHUB_TOKEN }}", id="github-actions"),
    pytest.param("token: null", id="null"),
    pytest.param("api_key=None", id="none"),
    pytest.param("Authorization: Bearer <token>", id="bearer-placeholder"),
    pytest.param("Fixed in 3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345.", id="commit-sha"),
    pytest.param("Request 123e4567-e89b-12d3-a456-426614174000 failed.", id="uuid"),
    pytest.param("See src/auth/token_store.py and tests/auth/test_keys.py.", id="paths"),
    pytest.param("https://example.com/path?x=1&sort=desc#top", id="url"),
    pytest.param("https://user@example.com/path and git@github.com:acme/api.git", id="url-user"),
    pytest.param("http://localhost:8080/api?token_type=bearer", id="url-port"),
    pytest.param("key=name", id="weak-key-word"),
    pytest.param("sort_key=created_at", id="weak-sort-key"),
    pytest.param('cache_key = "user:1234:profile"', id="weak-cache-key"),
    pytest.param("primary_key=True", id="weak-primary-key"),
    pytest.param("def get_token(self):", id="def"),
    pytest.param('token = request.headers.get("X")', id="call"),
    pytest.param('password = os.environ["DB_PASSWORD"]', id="subscript"),
    pytest.param("token = self.token", id="attribute"),
    pytest.param("connect(host=host, password=db_password)", id="variable-argument"),
    pytest.param("login(user, password=password)", id="same-name-argument"),
    pytest.param("self.passwd = password_mgr", id="variable-assignment"),
    pytest.param("def login(username: str, password: str) -> Token:", id="annotations"),
    pytest.param("async def run(self, token: object, secret: SecretStr) -> None:", id="types"),
    pytest.param("if token == expected_token:", id="comparison"),
    pytest.param("max_tokens: 4096\ntoken_count = 1234567", id="token-counters"),
    pytest.param("password_file=/run/secrets/db_password", id="password-file"),
    pytest.param("PWD=/home/dev/project", id="shell-pwd"),
    pytest.param('Token:              "#f8f8f2",', id="theme-color"),
    pytest.param('{"mask_token": "[MASK]", "bos_token": "<s>"}', id="tokenizer-config"),
    pytest.param("sk-learn-compatible-estimator-interface", id="sk-words"),
    pytest.param("AKIA marks long-term keys and ghp_ marks GitHub tokens.", id="prefixes"),
    pytest.param("eyJ is how base64 JSON starts: eyJhbGciOi.", id="eyj-prose"),
    pytest.param(
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
        id="public-certificate",
    ),
    pytest.param(
        '_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
        '_END = b"-----END OPENSSH PRIVATE KEY-----"',
        id="pem-markers-in-code",
    ),
    pytest.param(
        "# Secrets\n\n- **Never** log the `password`.\n- Rotate tokens. 🔐", id="markdown"
    ),
    pytest.param("Der Schlüssel liegt im Tresor — パスワードを忘れた 🙂", id="non-ascii"),
    pytest.param("| user | password |\n|------|----------|\n| admin | in vault |", id="table"),
    pytest.param('os.environ["HOME"] = "/tmp"', id="subscript-innocent-name"),
    pytest.param('os.environ["DB_PASSWORD"] = get_password()', id="subscript-call"),
    pytest.param('if creds["password"] == "Hunt3rPass99":', id="subscript-comparison"),
    pytest.param("password = get_password()", id="call-result"),
    pytest.param('{"password": "Mot de passe"}', id="passphrase-label"),
    pytest.param('password: "Your password is too weak"', id="passphrase-message"),
    pytest.param('{"password": "Must be at least 12 characters."}', id="passphrase-sentence"),
    pytest.param("the password: must be rotated monthly", id="prose-password-colon"),
    pytest.param("Password for admin: see the vault", id="prompt-prose"),
    pytest.param("[sudo] password for ada: Sorry, try again.", id="prompt-sudo-retry"),
    pytest.param("Enter password for admin: ********", id="prompt-masked"),
    pytest.param("Set-Cookie: SameSite=Strict", id="set-cookie-attribute"),
    pytest.param("Set-Cookie: session=deleted; Expires=Thu, 01 Jan 1970 00:00:00 GMT", id="logout"),
    pytest.param("Cookie: lang=en-US; theme=dark", id="cookie-preferences"),
    pytest.param("http://[2001:db8::1]:8080/path", id="url-ipv6"),
    pytest.param("postgres://admin@[2001:db8::1]:5432/prod", id="url-ipv6-user"),
    pytest.param("https://app.example.com/search?q=password&sort=desc", id="query-word-password"),
    pytest.param("a:1:b:c:d", id="colons-short"),
    pytest.param("WARNING:1234:main:worker:Restarting", id="colons-log"),
    pytest.param("localhost:5432:*:postgres:*", id="pgpass-wildcard-password"),
    pytest.param('variable "region" { default = "eu-west-1" }', id="terraform-innocent-name"),
    pytest.param('variable "db_password" {\n  sensitive = true\n}', id="terraform-no-default"),
    pytest.param('echo "$CR_PAT" | docker login -u bob --password-stdin', id="stdin-variable"),
    pytest.param("cat ~/.docker/token | docker login --password-stdin", id="stdin-file"),
]

ADVERSARIAL = [
    pytest.param("a" * 20_000, id="letters"),
    pytest.param("=" * 20_000, id="equals"),
    pytest.param("a=" * 10_000, id="assignments"),
    pytest.param("password=" * 2_200, id="password-chain"),
    pytest.param('token="' * 2_800, id="open-quotes"),
    pytest.param("key: " * 4_000, id="colons"),
    pytest.param("https://u:" * 2_000, id="url-prefixes"),
    pytest.param("-----BEGIN PRIVATE KEY-----" * 700, id="pem-headers"),
    pytest.param("-" * 20_000, id="dashes"),
    pytest.param("sk-" * 6_600, id="sk-prefixes"),
    pytest.param("eyJa." * 4_000, id="jwt-parts"),
    pytest.param("Bearer " * 2_800, id="bearer"),
    pytest.param("\\" * 20_000, id="backslashes"),
    pytest.param(" " * 20_000, id="blanks"),
    pytest.param("password=a&" * 1_800, id="ampersand-chain"),
    pytest.param('["password"]=' * 1_500, id="subscript-chain"),
    pytest.param("Cookie: a=bbbbbb1; " * 1_000, id="cookie-pairs"),
    pytest.param("a:1:b:c:" * 2_500, id="pgpass-fields"),
    pytest.param("Password for " * 1_500, id="prompts"),
    pytest.param("echo x | --password-stdin " * 750, id="stdin-flags"),
    pytest.param('variable "password" { default = "x' * 600, id="terraform-blocks"),
]


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_secret_is_replaced_and_its_context_kept(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize("text", INNOCENT)
def test_innocent_text_survives_byte_for_byte(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text", [*(p.values[0] for p in SECRETS), *(p.values[0] for p in INNOCENT)]
)
def test_redacting_twice_gives_the_same_result(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once


def _best_ratio(large: str, small: str) -> float:
    return cpu_ratio(redact_secrets, large, small)


@pytest.mark.parametrize(
    "unit",
    [
        *("key=", "auth=", "sk-", " -p", "password=a&", "Cookie: a=bbbbbb1; ", ":1:"),
        *("value: Tr0ub4dor3 ", "secret access key is ", 'x\\"', "%3A%2F%2Fa%3A", "key "),
    ],
)
def test_a_chain_of_candidates_costs_linear_time(unit: str) -> None:
    """Each "key=" (a weak name) or "sk-" (a token prefix) of one long word was judged against
    the rest of the word, each "-p" flag against the whole line before it: 4 times the text took
    15 times as long."""
    small, large = (unit * (size // len(unit)) for size in (5_000, 5_000 * GROWTH))
    ratio = _best_ratio(large, small)
    assert ratio < LINEAR_BOUND, f"{ratio:.1f} x (linear: 8 x; quadratic: 64 x)"


def test_a_long_run_of_backslashes_after_an_escaped_quote_costs_linear_time() -> None:
    """Each backslash of the run was tried as the start of an escape, scanning the rest."""
    small, large = ('\\"' + "\\" * size + "x" for size in (5_000, 5_000 * GROWTH))
    ratio = _best_ratio(large, small)
    assert ratio < LINEAR_BOUND, f"{ratio:.1f} x (linear: 8 x; quadratic: 64 x)"


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_input_does_not_backtrack_catastrophically(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once


def test_aws_access_key_is_redacted() -> None:
    assert "AKIAZ7Q3MEXW4LRT2N5K" not in redact_secrets("key id AKIAZ7Q3MEXW4LRT2N5K, region eu")


def test_private_key_block_keeps_its_begin_and_end_lines() -> None:
    redacted = redact_secrets(f"deploy key:\n{pem('OPENSSH')}\n")
    assert redacted == f"deploy key:\n{pem('OPENSSH', R)}\n"
    assert "MIIE" not in redacted


def test_connection_string_keeps_user_host_and_database() -> None:
    text = "postgres://user:p4ssw0rd@host/db"
    assert redact_secrets(text) == "postgres://user:[REDACTED]@host/db"


def test_placeholder_password_in_connection_string_is_kept() -> None:
    text = "postgres://user:${PGPASSWORD}@host/db"
    assert redact_secrets(text) == text


def test_weak_key_name_redacts_only_high_entropy_values() -> None:
    assert redact_secrets("key=created_at_idx") == "key=created_at_idx"
    assert redact_secrets("key=abcdefghijklmnopqrstuvwxyz") == "key=abcdefghijklmnopqrstuvwxyz"
    assert redact_secrets("key=Xq7Lm2Pz9Rt4Vw8K") == "key=[REDACTED]"


def test_strong_name_redacts_short_literals_from_six_characters() -> None:
    assert redact_secrets("password=abc12") == "password=abc12"
    assert redact_secrets("password=abc123") == "password=[REDACTED]"


def test_value_with_spaces_is_not_treated_as_a_secret() -> None:
    text = 'token: "a JWT signed by the auth service"'
    assert redact_secrets(text) == text


def test_every_secret_of_a_long_note_is_redacted() -> None:
    prose = "Refactored the session store; see src/auth/token_store.py. " * 150
    text = f"{prose}\npassword=hunter22!\n{prose}\nAuthorization: Bearer {OPENAI_BODY}\n"
    redacted = redact_secrets(text)
    assert "hunter22" not in redacted
    assert OPENAI_BODY not in redacted
    assert redacted.count(R) == 2


FRAGMENTS = [
    *(p.values[0] for p in SECRETS),
    *(p.values[0] for p in INNOCENT),
    "=",
    ":",
    " ",
    "\n",
    '"',
    "'",
    "@",
    "://",
    "-----",
    "\\n",
    "[REDACTED]",
    "Bearer ",
    "token",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=8))
def test_redaction_is_idempotent_on_mixed_text(parts: list[str]) -> None:
    once = redact_secrets("".join(parts))
    assert redact_secrets(once) == once


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param("password=sprIng2024https://user@example.com/path", id="password"),
        pytest.param("CI_TOKEN: glpat-" + "zgEOzdmenCkhvMdgaKjI", id="gitlab-token"),
    ],
)
def test_a_secret_glued_to_a_private_key_s_begin_line_leaves_the_line_whole(secret: str) -> None:
    """Found by the property above: the value ran on into "-----BEGIN", so the second pass read
    the first, cut key up to the second key's END line and redacted the text between."""
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7\n"
    cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn\n\nThe rest was cut."
    text = f"{cut}{secret}{key}-----END RSA PRIVATE KEY-----"
    once = redact_secrets(text)
    name = secret[: secret.index("=" if "=" in secret else " ") + 1]
    assert once == (
        f"-----BEGIN RSA PRIVATE KEY-----\n{R}\n\nThe rest was cut.{name}{R}"
        f"-----BEGIN RSA PRIVATE KEY-----\n{R}\n-----END RSA PRIVATE KEY-----"
    )
    assert redact_secrets(once) == once


def test_an_unquoted_password_is_redacted_up_to_the_blank_not_to_its_ampersand() -> None:
    redacted = redact_secrets("DB_PASSWORD=Tr0ub4dor&3 psql -h db")
    assert redacted == f"DB_PASSWORD={R} psql -h db"
    assert "&3" not in redacted


def test_a_query_string_password_ends_at_the_next_parameter() -> None:
    text = "GET /login?user=bob&password=hunter22&remember=1 HTTP/1.1"
    assert redact_secrets(text) == f"GET /login?user=bob&password={R}&remember=1 HTTP/1.1"


def test_set_cookie_redacts_its_cookie_and_keeps_its_attributes() -> None:
    text = "Set-Cookie: session=abc123def456; Path=/; Max-Age=3600; Secure; SameSite=Strict"
    expected = f"Set-Cookie: session={R}; Path=/; Max-Age=3600; Secure; SameSite=Strict"
    assert redact_secrets(text) == expected


def test_a_passphrase_is_redacted_only_under_a_password_name() -> None:
    assert redact_secrets('passphrase = "correct horse battery staple"') == f'passphrase = "{R}"'
    assert redact_secrets('title = "correct horse battery staple"') == (
        'title = "correct horse battery staple"'
    )


@pytest.mark.parametrize(
    "text",
    [
        "DB_PASSWORD=CorrectHorseBatteryStaple",
        "export DB_PASSWORD=CorrectHorseBatteryStaple",
        "docker run -e API_KEY=CorrectHorseBatteryStaple app",
        "SECRET=CorrectHorseBatteryStaple # prod",
        "APP_TOKEN=CorrectHorseBatteryStaple\nDB_HOST=db.internal\n",
    ],
)
def test_a_camel_case_passphrase_in_an_env_file_assignment_is_redacted(text: str) -> None:
    assert redact_secrets(text) == text.replace("CorrectHorseBatteryStaple", R)


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD = PasswordField",  # code: blanks around "="
        "API_KEY = apiKey",
        "PASSWORD = settings.password",
        "f(PASSWORD=PasswordField)",  # a keyword argument
        "f(PASSWORD=PasswordField, x)",
        "password=PasswordField",  # a lower-case name: code as often as not
        "DB_PASSWORD=YourPassword",  # a value naming a secret, or a placeholder
        "GITHUB_TOKEN=GithubToken",
        "SECRET=YourSecretHere",
        "DB_PASSWORD=$DB_PASSWORD",
        "DB_PASSWORD=${DB_PASSWORD}",
        "DB_PASSWORD=changeme",
        "DB_PASSWORD=ChangeMe",
        "DB_PASSWORD=<your-password>",
        "DB_PASSWORD=***",
        "PASSWORD_HASHER=Argon2Hasher",  # no secret name
        "TOKEN_TYPE=Bearer",
    ],
)
def test_a_camel_case_value_outside_an_env_file_assignment_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "password=CorrectHorseBatteryStaple",
        "db_password=CorrectHorseBatteryStaple",
        "export db_password=CorrectHorseBatteryStaple",
        "docker run -e api_key=CorrectHorseBatteryStaple app",
        "spring.datasource.password=CorrectHorseBatteryStaple",
        "dbPassword=CorrectHorseBatteryStaple # prod",
        "[db]\nhost=db.internal\npassword=CorrectHorseBatteryStaple\n",
    ],
)
def test_a_camel_case_passphrase_after_a_lower_case_secret_name_is_redacted(text: str) -> None:
    assert redact_secrets(text) == text.replace("CorrectHorseBatteryStaple", R)


@pytest.mark.parametrize("text", ["JWT_SECRET=SUPER_SECRET", "password=SUPER_SECRET_VALUE"])
def test_an_upper_case_literal_that_names_nothing_is_still_redacted(text: str) -> None:
    name = text.split("=")[0]
    assert redact_secrets(text) == f"{name}={R}"


@pytest.mark.parametrize(
    "text",
    [
        "password = PasswordField",  # code: blanks around "="
        "f(password=Password)",  # a keyword argument
        "f(password=PasswordField)",
        "f(user, password=CorrectHorse)",
        "connect(\n    host=host,\n    password=PasswordHasher\n)",  # the last keyword argument
        "self.password=PasswordField",
        "password=PASSWORD_ENV",  # a constant naming where the secret is
        "DB_PASSWORD=PASSWORD_ENV",
        "api_key=API_KEY_NAME",
        "password=DB_PASSWORD_FILE",
        "password=YourPassword",  # a value naming a secret, or a placeholder
        "password=ChangeMe",
        "password=ReplaceMe",
        "password=YourSecretHere",
        "password=InsertPasswordHere",
        "db_password=DummyValue",
        "password=Hunter",  # one word reads as a class name
        "password=Required",
        "password_hasher=Argon2Hasher",  # no secret name
        "token_type=BearerToken",
        "password: SecretStr",  # ":" and a type (test_redaction_shapes.py: a passphrase)
        "def login(password: CorrectHorse, user: str) -> None:",
    ],
)
def test_a_camel_case_value_after_a_lower_case_name_that_reads_as_code_is_kept(
    text: str,
) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "export DB_PASSWORD=CorrectHorse;",
        "export DB_PASSWORD=CorrectHorse; ./deploy.sh",
        "DB_PASSWORD=CorrectHorseBatteryStaple;\n",
        "export db_password=CorrectHorseBatteryStaple; make deploy",
    ],
)
def test_a_camel_case_passphrase_ended_by_a_shell_semicolon_is_redacted(text: str) -> None:
    secret = "CorrectHorseBatteryStaple" if "Staple" in text else "CorrectHorse"
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        "PASSWORD=PasswordField;",  # a value naming a secret
        "this.password=PasswordField;",  # code
        "password = PasswordField;",
        "f(PASSWORD=PasswordField);",
    ],
)
def test_code_ended_by_a_semicolon_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


SERVICE_ACCOUNT_KEY_ID = "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345"
ESCAPED_PEM_BODY = PEM_BODY.replace("\n", "\\n")  # as a JSON string holds it


@pytest.mark.parametrize(
    "text",
    [
        f'"private_key_id": "{SERVICE_ACCOUNT_KEY_ID}"',
        f'{{\\"private_key_id\\": \\"{SERVICE_ACCOUNT_KEY_ID}\\"}}',  # JSON in a JSON string
        f"FIREBASE_PRIVATE_KEY_ID={SERVICE_ACCOUNT_KEY_ID}",
        f"private_key_id: {SERVICE_ACCOUNT_KEY_ID}",
        f'privateKeyId: "{SERVICE_ACCOUNT_KEY_ID}"',
    ],
)
def test_a_service_account_private_key_id_is_redacted(text: str) -> None:
    assert redact_secrets(text) == text.replace(SERVICE_ACCOUNT_KEY_ID, R)


def test_a_service_account_key_file_keeps_its_public_fields() -> None:
    text = (
        '{\n  "type": "service_account",\n  "project_id": "acme-prod",\n'
        f'  "private_key_id": "{SERVICE_ACCOUNT_KEY_ID}",\n'
        f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{ESCAPED_PEM_BODY}'
        '\\n-----END PRIVATE KEY-----\\n",\n'
        '  "client_email": "deploy@acme-prod.iam.gserviceaccount.com",\n'
        '  "client_id": "112233445566778899001",\n'
        '  "auth_uri": "https://accounts.google.com/o/oauth2/auth",\n'
        '  "token_uri": "https://oauth2.googleapis.com/token",\n'
        '  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",\n'
        '  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/deploy",\n'
        '  "universe_domain": "googleapis.com"\n}'
    )
    expected = text.replace(SERVICE_ACCOUNT_KEY_ID, R).replace(ESCAPED_PEM_BODY, R)
    assert redact_secrets(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "key_id=prod-signing-2024",  # other key ids are public
        '"kid": "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345"',
        "request_id=3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345",
        "private_key_id: null",
        'private_key_id = "${var.key_id}"',
    ],
)
def test_other_key_ids_are_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("password: correct horse battery staple", "correct horse battery staple"),
        ("db:\n  password: correct horse battery staple\n", "correct horse battery staple"),
        ("passphrase: purple monkey dishwasher lamp  # prod", "purple monkey dishwasher lamp"),
        ("Password: correct horse battery staple\n", "correct horse battery staple"),
        ("- db_password: tiger lamp orbit velvet canyon", "tiger lamp orbit velvet canyon"),
        ("wifi passphrase: correct horse battery staple", "correct horse battery staple"),
    ],
)
def test_a_bare_passphrase_of_lower_case_words_after_a_password_name_is_redacted(
    text: str, secret: str
) -> None:
    assert redact_secrets(text) == text.replace(secret, R)


@pytest.mark.parametrize(
    "text",
    [
        "password: the one in the vault",
        "password: see 1Password",
        "password: same as staging",
        "password: ask ops for it",
        "password: stored in the team vault",
        "password: in 1password under acme prod",
        "password: check with bob before using it",
        "password: not set yet",
        "password: must be rotated monthly",
        "password: rotated every ninety days",
        "password: whatever you set during install",
        "password: your usual github password",
        "password: empty by default on local",
        "password: reset via the admin panel",
        "password: changed after the incident",
        "password: required for prod only",
        "password: use the env var instead",
        "password: lives in vault kv prod",
        "password: comes from aws secrets manager",
        "password: kept in keychain access",
        "password: prompted on first login",
        "password: provided by the ops team",
        "password: hashed with bcrypt cost twelve",
        "password: generated randomly at deploy time",
        "password: none needed for local dev",
        "password: blank for local development",
        "password: admin password from bitwarden",
        "Password policy: minimum twelve characters long",
        "passphrase: four random words joined",
        "passphrase: diceware style random words",
        "password: correct horse",  # too short to tell
        "Password: Reset Email Template Update",  # a title (test_redaction_shapes.py)
        "the password: correct horse battery staple",  # prose, not a key
        "Note the password: correct horse battery staple",
        "title: correct horse battery staple",  # no password name
        "password_hint: correct horse battery staple",
    ],
)
def test_prose_after_a_password_name_and_a_colon_is_kept(text: str) -> None:
    assert redact_secrets(text) == text
