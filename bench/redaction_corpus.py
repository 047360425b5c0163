"""Build the labelled redaction corpus: ``python bench/redaction_corpus.py`` rewrites
``tests/domain/redaction_corpus.jsonl``.

Each line is ``{"id", "family", "text", "secrets"}``: ``secrets`` lists the substrings that must
not survive redaction (empty for an innocent text, which must survive byte for byte). Secret
bodies are random (a fixed seed) in each vendor's documented alphabet and length; they were never
valid credentials. In the file, ``§§`` splits each token after its vendor prefix so that secret
scanners do not flag the repository; :func:`load_corpus` joins them again.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "domain" / "redaction_corpus.jsonl"
JOINT = "§§"
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


@dataclass(frozen=True)
class Case:
    family: str
    text: str
    secrets: tuple[str, ...]


_rng = random.Random(20261203)


def rand(alphabet: str, size: int) -> str:
    """Random characters, with at least one digit and one letter where the alphabet has both."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(size))
        has_digit = any(c.isdigit() for c in value) or not any(c.isdigit() for c in alphabet)
        has_alpha = any(c.isalpha() for c in value) or not any(c.isalpha() for c in alphabet)
        if has_digit and has_alpha:
            return value


# (family, prefix, body alphabet, body length, suffix)
VENDORS: tuple[tuple[str, str, str, int, str], ...] = (
    ("aws-access-key-id", "AKIA", UPPER, 16, ""),
    ("aws-sts-key-id", "ASIA", UPPER, 16, ""),
    ("github-pat-classic", "ghp_", ALNUM, 36, ""),
    ("github-oauth", "gho_", ALNUM, 36, ""),
    ("github-app-user", "ghu_", ALNUM, 36, ""),
    ("github-app-server", "ghs_", ALNUM, 36, ""),
    ("github-refresh", "ghr_", ALNUM, 36, ""),
    ("github-pat-fine", "github_pat_", ALNUM + "_", 82, ""),
    ("gitlab-pat", "glpat-", URLSAFE, 20, ""),
    ("gitlab-deploy", "gldt-", URLSAFE, 20, ""),
    ("gitlab-runner", "glrt-", URLSAFE, 20, ""),
    ("gitlab-runner-registration", "GR1348941", URLSAFE, 20, ""),
    ("grafana-cloud", "glc_", ALNUM, 48, ""),
    ("grafana-service-account", "glsa_", ALNUM, 32, "_" + "3f2a9c1b"),
    ("slack-bot", "xoxb-", string.digits, 12, "-" + "1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"),
    (
        "slack-user",
        "xoxp-",
        string.digits,
        12,
        "-" + "1234567890123-" + "1234567890123-" + "0f" * 16,
    ),
    ("slack-app", "xapp-1-", UPPER, 11, "-" + "1234567890123-" + "0a1b2c" * 10),
    ("stripe-secret", "sk_live_", ALNUM, 24, ""),
    ("stripe-test", "sk_test_", ALNUM, 24, ""),
    ("stripe-restricted", "rk_live_", ALNUM, 24, ""),
    ("stripe-webhook", "whsec_", ALNUM, 32, ""),
    ("openai-project", "sk-proj-", URLSAFE, 64, ""),
    ("openai-legacy", "sk-", ALNUM, 48, ""),
    ("anthropic", "sk-ant-api03-", URLSAFE, 93, "AA"),
    ("google-api-key", "AIza", URLSAFE, 35, ""),
    ("google-oauth-secret", "GOCSPX-", URLSAFE, 28, ""),
    ("google-oauth-access", "ya29.", URLSAFE, 60, ""),
    ("npm", "npm_", ALNUM, 36, ""),
    ("pypi", "pypi-AgEIcHlwaS5vcmc", URLSAFE, 60, ""),
    ("docker-hub", "dckr_pat_", URLSAFE, 27, ""),
    ("hugging-face", "hf_", string.ascii_letters, 34, ""),
    ("hugging-face-org", "api_org_", string.ascii_letters, 34, ""),
    ("sendgrid", "SG.", URLSAFE, 22, "." + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v"),
    ("linear", "lin_api_", ALNUM, 40, ""),
    ("vault-service", "hvs.", URLSAFE, 90, ""),
    ("vault-batch", "hvb.", URLSAFE, 90, ""),
    ("digitalocean-pat", "dop_v1_", HEX, 64, ""),
    ("digitalocean-oauth", "doo_v1_", HEX, 64, ""),
    ("databricks", "dapi", HEX, 32, ""),
    ("doppler-personal", "dp.pt.", ALNUM, 43, ""),
    ("doppler-service", "dp.st.", ALNUM, 43, ""),
    ("heroku", "HRKU-", URLSAFE, 60, ""),
    ("shopify-access", "shpat_", HEX, 32, ""),
    ("shopify-shared-secret", "shpss_", HEX, 32, ""),
    ("atlassian", "ATATT3", URLSAFE, 180, ""),
    ("alibaba", "LTAI", ALNUM, 20, ""),
    ("new-relic", "NRAK-", UPPER, 27, ""),
    ("sentry-user", "sntryu_", HEX, 64, ""),
    ("pulumi", "pul-", HEX, 40, ""),
    ("age", "AGE-SECRET-KEY-1", BECH32, 58, ""),
    ("postman", "PMAK-", HEX, 24, "-" + "0a1b2c3d4e5f60718293a4b5c6d7e8f901"),
    ("square-access", "sq0atp-", URLSAFE, 22, ""),
    ("square-secret", "sq0csp-", URLSAFE, 43, ""),
    ("facebook", "EAA", ALNUM, 120, ""),
    ("figma", "figd_", URLSAFE, 40, ""),
    ("notion", "ntn_", ALNUM, 46, ""),
    ("supabase", "sbp_", HEX, 40, ""),
    ("planetscale", "pscale_tkn_", URLSAFE, 43, ""),
    ("groq", "gsk_", ALNUM, 52, ""),
    ("replicate", "r8_", ALNUM, 37, ""),
    ("perplexity", "pplx-", ALNUM, 48, ""),
    ("tailscale", "tskey-auth-", ALNUM, 12, "-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    ("buildkite", "bkua_", HEX, 40, ""),
    ("contentful", "CFPAT-", URLSAFE, 43, ""),
    ("rubygems", "rubygems_", HEX, 48, ""),
    ("flutterwave", "FLWSECK-", HEX, 32, "-X"),
    ("twilio-api-key", "SK", HEX, 32, ""),
    ("mailgun-legacy", "key-", ALNUM, 32, ""),
    ("clojars", "CLOJARS_", string.ascii_lowercase + string.digits, 60, ""),
    ("easypost", "EZAK", HEX, 54, ""),
    ("prefect", "pnu_", ALNUM, 36, ""),
    ("adafruit", "aio_", ALNUM, 28, ""),
    ("fly", "fo1_", URLSAFE, 43, ""),
    ("netlify", "nfp_", ALNUM, 40, ""),
    ("xai", "xai-", ALNUM, 80, ""),
    ("mapbox-secret", "sk.eyJ", URLSAFE, 40, "." + "AbCdEfGhIjKlMnOpQrStUv"),
    ("jfrog", "AKCp", ALNUM, 69, ""),
    ("dynatrace", "dt0c01.", UPPER, 24, "." + "A1B2C3D4E5F6G7H8" * 4),
    ("1password-service", "ops_eyJ", URLSAFE, 80, ""),
    ("airtable", "patAbCdEf12345678", "", 0, "." + "0a1b2c3d" * 8),
    ("aletheia-hub", "alt_", URLSAFE, 32, ""),  # Aletheia's own hub tokens
)

# How a token is written in a note: the secret is {s}.
CONTEXTS = (
    "export TOKEN={s}",
    'config = {{"api_key": "{s}"}}',
    "Leaked {s} in the CI log, rotated it.",
    "curl -H 'X-Api-Key: {s}' https://api.example.com/v1",
)


def vendor_cases() -> Iterator[Case]:
    for index, (family, prefix, alphabet, size, suffix) in enumerate(VENDORS):
        body = rand(alphabet, size) if size else ""
        token = prefix + body + suffix
        for number in range(3):
            context = CONTEXTS[(index + number) % len(CONTEXTS)]
            yield Case(family, context.format(s=token), (token,))


def _unprefixed(pw: str, hex32: str) -> list[Case]:
    uuid = "-".join(rand(HEX, n) for n in (8, 4, 4, 4, 12))
    azure_ad = rand(URLSAFE, 3) + "8Q~" + rand(URLSAFE + ".~", 34)
    mailgun = rand(HEX, 32) + "-" + rand(HEX, 8) + "-" + rand(HEX, 8)
    mailchimp = rand(HEX, 32) + "-us14"
    discord = "M" + rand(ALNUM, 25) + "." + rand(URLSAFE, 6) + "." + rand(URLSAFE, 38)
    telegram = "123456789:AA" + rand(URLSAFE, 33)
    terraform = rand(ALNUM, 14) + ".atlasv1." + rand(URLSAFE, 67)
    aws_secret = rand(B64, 40)
    key_id = hex32 + mailchimp[:8]  # 40 hex, without drawing again (the corpus stays as it was)
    camel, words = "CorrectHorseBatteryStaple", "correct horse battery staple"
    return [
        Case("heroku-legacy", f"HEROKU_API_KEY={uuid}", (uuid,)),
        Case("heroku-legacy", f'heroku_key: "{uuid}"', (uuid,)),
        Case("azure-ad-secret", f"AZURE_CLIENT_SECRET={azure_ad}", (azure_ad,)),
        Case("azure-ad-secret", f"client secret {azure_ad} expires in June", (azure_ad,)),
        Case("mailgun", f"MAILGUN_API_KEY={mailgun}", (mailgun,)),
        Case("mailgun", f"mailgun private key {mailgun}", (mailgun,)),
        Case("mailchimp", f"mailchimp key {mailchimp}", (mailchimp,)),
        Case("discord-bot", f"bot.run('{discord}')", (discord,)),
        Case("telegram-bot", f"TELEGRAM_BOT={telegram}", (telegram.split(":")[1],)),
        Case("terraform-cloud", f'token = "{terraform}"', (terraform,)),
        Case("aws-secret-key", f"aws_secret_access_key = {aws_secret}", (aws_secret,)),
        Case("aws-secret-key", f'"SecretAccessKey": "{aws_secret}"', (aws_secret,)),
        Case("twilio-auth-token", f"TWILIO_AUTH_TOKEN={hex32}", (hex32,)),
        Case("twilio-auth-token", f"twilio auth token: {hex32}", (hex32,)),
        Case("databricks-host", f"databricks_token = '{hex32}'", (hex32,)),
        Case("mapbox-context", f"MAPBOX_ACCESS_TOKEN={pw}", (pw,)),
        Case("gcp-private-key-id", f'"private_key_id": "{key_id}"', (key_id,)),
        Case("gcp-private-key-id", f"FIREBASE_PRIVATE_KEY_ID={key_id}", (key_id,)),
        Case("passphrase-camel-case", "db_password=CorrectHorseBatteryStaple", (camel,)),
        Case("passphrase-camel-case", "export DB_PASSWORD=CorrectHorseBatteryStaple;", (camel,)),
        Case("passphrase-bare", f"db:\n  password: {words}\n", (words,)),
        Case("passphrase-bare", f"wifi passphrase: {words}", (words,)),
        Case("passphrase-camel-case", f"password: {camel}", (camel,)),
        Case(
            "passphrase-camel-case",
            "db:\n  password: PurpleMonkeyDishwasher\n",
            ("PurpleMonkeyDishwasher",),
        ),
        Case("passphrase-title-case", f"password: {words.title()}", (words.title(),)),
        Case("passphrase-sentence", f"the wifi password is {words}", (words,)),
        Case("passphrase-sentence", f"The passphrase was {words.title()}.", (words.title(),)),
        Case("export-one-word", "export db_password=Sunshine; ./deploy.sh", ("Sunshine",)),
        Case("hex-key-prose", f"the datadog key {hex32}", (hex32,)),
        Case("hex-key-prose", f"sentry key is {hex32}.", (hex32,)),
    ]


def _urls(pw: str) -> list[Case]:
    at_pw, slash_pw, hash_pw = "p@" + pw, pw[:5] + "/" + pw[5:], pw[:4] + "#" + pw[4:]
    return [
        Case("url-password", f"postgres://app:{pw}@db.internal:5432/shop", (pw,)),
        Case("url-password", f"DATABASE_URL=mysql://root:{pw}@127.0.0.1/app", (pw,)),
        Case("url-password", f"mongodb+srv://svc:{pw}@cluster0.x1y2.mongodb.net/db", (pw,)),
        Case("url-password", f"redis://:{pw}@cache:6379/0", (pw,)),
        Case("url-password", f"amqp://guest:{pw}@mq.local//", (pw,)),
        Case("url-password", f"git clone https://bob:{pw}@git.example.com/acme/api.git", (pw,)),
        Case("url-password-at", f"postgres://app:{at_pw}@db.example.com/prod", (at_pw,)),
        Case("url-password-slash", f"mysql://app:{slash_pw}@db.example.com/prod", (slash_pw,)),
        Case("url-password-hash", f"https://ci:{hash_pw}@nexus.example.com/repo", (hash_pw,)),
        Case("url-password-mixed", f"amqp://u:{at_pw}/{hash_pw}@rabbit:5672/vh", (at_pw,)),
        Case("go-dsn", f'dsn := "app:{pw}@tcp(db:3306)/shop?parseTime=true"', (pw,)),
        Case("jdbc", f"jdbc:postgresql://db/shop?user=app&password={pw}&ssl=true", (pw,)),
        Case("odbc", f"Server=db;Database=shop;User Id=sa;Password={pw};", (pw,)),
        Case("git-token-url", f"https://x-access-token:{pw}@github.com/acme/api", (pw,)),
        Case("url-password-ipv6", f"postgres://admin:{pw}@[2001:db8::1]:5432/prod", (pw,)),
        Case("url-password-ipv6", f"mysql://root:{pw}@[fe80::1%25eth0]/shop", (pw,)),
        Case("query-password", f"https://app.example.com/login?password={pw}&user=bob", (pw,)),
    ]


def _commands(pw: str) -> list[Case]:
    return [
        Case("curl-user", f"curl -u admin:{pw} https://api.example.com/items", (pw,)),
        Case("curl-user", f"curl --user 'deploy:{pw}' https://x.example.com", (pw,)),
        Case("curl-user", f"curl -U proxy:{pw} --proxy http://p:3128 https://a.b", (pw,)),
        Case("password-flag", f"vault login -method=userpass username=bob --password {pw}", (pw,)),
        Case("password-flag", f"psql --host db --password={pw} shop", (pw,)),
        Case("password-flag", f"mytool sync --api-key {pw} --verbose", (pw,)),
        Case("password-flag", f"az login -u bob@corp.com --password '{pw}'", (pw,)),
        Case("password-flag", f"gh auth login --with-token --token {pw}", (pw,)),
        Case("password-flag", f'./deploy.sh --client-secret "{pw}"', (pw,)),
        Case("mysql-p", f"mysql -u root -p{pw} shop < dump.sql", (pw,)),
        Case("mysql-p", f"mysqldump -uroot -p'{pw}' --all-databases > all.sql", (pw,)),
        Case("sshpass", f"sshpass -p {pw} ssh deploy@10.0.0.5", (pw,)),
        Case("docker-login", f"docker login -u bob -p {pw} registry.example.com", (pw,)),
        Case("redis-cli", f"redis-cli -h cache -a {pw} ping", (pw,)),
        Case("openssl-pass", f"openssl rsa -in key.pem -passin pass:{pw} -out plain.pem", (pw,)),
        Case("env-prefix", f"PGPASSWORD={pw} psql -h db -U app shop", (pw,)),
        Case("htpasswd", f"wget --http-password={pw} https://files.example.com/a.zip", (pw,)),
        Case("password-stdin", f"echo {pw} | docker login -u bob --password-stdin", (pw,)),
        Case(
            "password-stdin",
            f"echo -n '{pw}' | helm registry login ghcr.io -u bob --password-stdin",
            (pw,),
        ),
    ]


def _headers(pw: str, hex40: str, b64: str) -> list[Case]:
    pw = rand(string.ascii_letters, 1) + rand(URLSAFE, 19)  # tokens are token68 characters
    return [
        Case("authorization-token", f"Authorization: token {hex40}", (hex40,)),
        Case("authorization-token", f'-H "Authorization: token {hex40}"', (hex40,)),
        Case("authorization-basic", f"Authorization: Basic {b64}", (b64,)),
        Case("authorization-bearer", f"Authorization: Bearer {pw}{hex40[:12]}", (pw,)),
        Case("authorization-bot", f"Authorization: Bot {pw}{hex40[:20]}", (pw,)),
        Case("authorization-ssws", f"Authorization: SSWS 00{pw}{hex40[:30]}", (pw,)),
        Case("bearer-prose", f"the call used Bearer {pw}{hex40[:10]} and failed", (pw,)),
        Case("api-key-header", f"X-API-Key: {hex40}", (hex40,)),
        Case("private-token-header", f"curl --header 'PRIVATE-TOKEN: {pw}' https://gl/api", (pw,)),
        Case("cookie-session", f"Cookie: sessionid={hex40}; csrftoken=abc", (hex40,)),
        Case("cookie-session", f"Cookie: PHPSESSID={hex40[:26]}", (hex40[:26],)),
        Case("cookie-session", f"Set-Cookie: connect.sid=s%3A{pw}{hex40[:8]}; Path=/", (pw,)),
        Case(
            "cookie-session",
            f"Set-Cookie: _shop_session=BAh7{b64[:20]}%3D%3D--{hex40}; path=/",
            (hex40,),
        ),
        Case("cookie-session", f"JSESSIONID={hex40[:32].upper()}", (hex40[:32].upper(),)),
        Case(
            "cookie-header",
            f"Set-Cookie: session={hex40[:12]}; Path=/; HttpOnly; SameSite=Lax",
            (hex40[:12],),
        ),
        Case("cookie-header", f"Cookie: theme=dark; sid={hex40[-12:]}", (hex40[-12:],)),
        Case(
            "curl-cookie",
            f"curl -b 'sessionid={hex40[:24]}' https://app.example.com/me",
            (hex40[:24],),
        ),
        Case(
            "curl-cookie",
            f'curl --cookie "theme=dark; _gh_sess={b64[:24]}" https://gh',
            (b64[:24],),
        ),
        Case("curl-cookie", f"curl -sS -b session={pw}{hex40[:6]} -X POST https://a.b/api", (pw,)),
    ]


def _configs(pw: str, hex64: str) -> list[Case]:
    return [
        Case("dotenv", f"DB_HOST=db\nDB_PASSWORD={pw}\nDEBUG=false\n", (pw,)),
        Case("dotenv", f'API_TOKEN="{pw}"', (pw,)),
        Case("dotenv", f"export STRIPE_SECRET='{pw}'", (pw,)),
        Case("yaml", f"database:\n  user: app\n  password: {pw}\n", (pw,)),
        Case("yaml", f'smtp:\n  password: "{pw}"  # prod\n', (pw,)),
        Case("yaml", f"auth:\n  client_secret: {pw}\n", (pw,)),
        Case("ini", f"[database]\nuser = app\npassword = {pw}\n", (pw,)),
        Case("ini", f"[pypi]\nusername = __token__\npassword = {pw}\n", (pw,)),
        Case("toml", f'[db]\npassword = "{pw}"\n', (pw,)),
        Case("xml", f"<config><password>{pw}</password></config>", (pw,)),
        Case("xml", f'<add key="SmtpPassword" value="{pw}" />', (pw,)),
        Case("xml", f'<datasource user="sa" password="{pw}"/>', (pw,)),
        Case("json", f'{{"user": "app", "password": "{pw}"}}', (pw,)),
        Case("properties", f"spring.datasource.password={pw}", (pw,)),
        Case("django-secret-key", f"SECRET_KEY = 'django-insecure-{pw}'", (pw,)),
        Case("flask-secret-key", f'app.secret_key = "{pw}"', (pw,)),
        Case("rails-secret-key-base", f"secret_key_base: {hex64}{hex64}", (hex64,)),
        Case("laravel-app-key", f"APP_KEY=base64:{pw}{hex64[:20]}=", (pw,)),
        Case("npmrc", f"//registry.npmjs.org/:_authToken={pw}", (pw,)),
        Case(
            "docker-config",
            f'{{"auths": {{"ghcr.io": {{"auth": "{hex64[:24]}{rand(B64, 8)}"}}}}}}',
            (hex64[:24],),
        ),
        Case("netrc", f"machine api.example.com login bob password {pw}", (pw,)),
        Case("azure-storage", f"AccountName=acct;AccountKey={hex64}{pw}==;EndpointSuffix=x", (pw,)),
        Case(
            "azure-service-bus",
            f"Endpoint=sb://ns/;SharedAccessKeyName=R;SharedAccessKey={pw}=",
            (pw,),
        ),
        Case(
            "azure-sas",
            f"https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={pw}%3D",
            (pw,),
        ),
        Case("totp-uri", f"otpauth://totp/ACME:bob?secret={pw.upper()}&issuer=ACME", (pw.upper(),)),
        Case("totp-seed", "TOTP seed: JBSWY3DPEHPK3PXPQ4ZA", ("JBSWY3DPEHPK3PXPQ4ZA",)),
        Case("totp-seed", "mfa_secret: KRSXG5CTMVRXEZLUKN2XAZ3F", ("KRSXG5CTMVRXEZLUKN2XAZ3F",)),
        Case("salt", f"AUTH_SALT={hex64[:30]}", (hex64[:30],)),
        Case("weak-key-entropy", f"key={hex64[:24]}", (hex64[:24],)),
        Case("subscript", f'os.environ["DB_PASSWORD"] = "{pw}"', (pw,)),
        Case("subscript", f"$creds['password'] = '{pw}';", (pw,)),
        Case("subscript", f'config["apiKey"] = "{hex64[:28]}"', (hex64[:28],)),
        Case("passphrase", f'{{"password": "correct horse {pw[:6]} staple"}}', (pw[:6],)),
        Case("passphrase", f'DB_PASSWORD="My Dog {pw[:6]} 2019!"', (pw[:6],)),
        Case("passphrase", f"passphrase: 'battery {pw[:6]} staple'", (pw[:6],)),
        # the end of the password must not survive either: secrets list both halves
        Case("password-ampersand", f"password={pw[:7]}&{pw[7:]}", (pw[:7], "&" + pw[7:])),
        Case("password-ampersand", f"DB_PASSWORD={pw[:7]};{pw[7:]}\n", (pw[:7], ";" + pw[7:])),
        Case("terraform", f'variable "db_password" {{ default = "{pw}" }}', (pw,)),
        Case(
            "terraform",
            f'variable "api_token" {{\n  type      = string\n  default   = "{pw}"\n'
            "  sensitive = true\n}",
            (pw,),
        ),
        Case("pgpass", f"db.example.com:5432:shop:app:{pw}", (pw,)),
        Case("pgpass", f"# ~/.pgpass\n*:*:*:postgres:{pw}\n", (pw,)),
    ]


def _prose(pw: str) -> list[Case]:
    return [
        Case("prose-password", f"The password for the staging db is {pw}.", (pw,)),
        Case("prose-password", f"my password is {pw}", (pw,)),
        Case("prose-password", f"Password: {pw} (prod, rotate in May)", (pw,)),
        Case("prose-password", f"The wifi passphrase was {pw}, changed since.", (pw,)),
        Case("prose-password", f"token is now `{pw}`", (pw,)),
        Case("prose-password", f"root pwd is {pw}", (pw,)),
        Case("prompt-password", f"Password for admin: {pw}", (pw,)),
        Case("prompt-password", f"$ psql -U app\nPassword for user app: {pw}\n", (pw,)),
    ]


def _blocks(pw: str) -> list[Case]:
    body = "\n".join(rand(B64, 64) for _ in range(4))
    kinds = ("RSA", "EC", "OPENSSH", "DSA", "ENCRYPTED", "")
    cases = []
    for kind in kinds:
        label = f"{kind} PRIVATE KEY".strip()
        cases.append(
            Case(
                f"pem-{kind.lower() or 'pkcs8'}",
                f"-----BEGIN {label}-----\n{body}\n-----END {label}-----",
                (body[:64],),
            )
        )
    pgp = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----"
    cases.append(Case("pgp-private", pgp, (body[:64],)))
    escaped = body.replace("\n", "\\n")
    json_key = (
        f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{escaped}\\n-----END PRIVATE KEY-----\\n"'
    )
    cases.append(Case("gcp-service-account", json_key, (body[:64],)))
    putty = (
        f"PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 4\n{body}\nPrivate-MAC: {rand(HEX, 64)}"
    )
    cases.append(Case("putty", putty, (body[:64],)))
    b64a, b64b = rand(B64, 24) + "==", rand(B64, 32) + "="
    k8s = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"
        f"data:\n  username: YWRtaW4=\n  password: {b64a}\n  api-token: {b64b}\n"
    )
    cases.append(Case("kubernetes-secret", k8s, (b64a, b64b)))
    string_data = (
        "kind: Secret\napiVersion: v1\nmetadata:\n  name: app\n"
        f"stringData:\n  DB_URL: postgres://db/shop\n  WEBHOOK_KEY: {pw}\n"
    )
    cases.append(Case("kubernetes-secret", string_data, (pw,)))
    return cases


# Drawn from their own generator, so that the cases above keep their values
_separator_rng = random.Random(20261207)


def _rand_apart(alphabet: str, size: int) -> str:
    while True:
        value = "".join(_separator_rng.choice(alphabet) for _ in range(size))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def _separators() -> list[Case]:
    """Secret names with ":", "is" or "->" and more words after the value; file names."""
    key20, key24, key32 = _rand_apart(ALNUM, 20), _rand_apart(ALNUM, 24), _rand_apart(ALNUM, 32)
    b64 = "/".join(_rand_apart(ALNUM, n) for n in (13, 7, 18))
    pw = _rand_apart(ALNUM, 12)
    return [
        Case("named-colon", f"staging creds: AWS_SECRET_ACCESS_KEY: {b64} for the deploy user",
             (b64,)),
        Case("named-colon", f"use api_key: {key20} for staging", (key20,)),
        Case("named-colon", f"X-Api-Key: {key32}, then run the smoke test", (key32,)),
        Case("named-colon", f"signing_key : {key24} (rotated in May)", (key24,)),
        Case("named-colon", f"passwd: {pw} for root on the bastion", (pw,)),
        Case("named-is", f"the STRIPE_KEY is {key24}", (key24,)),
        Case("named-is", f"our credentials is {key32} for the CI bot", (key32,)),
        Case("named-arrow", f"rotated encryption_key -> {key20}", (key20,)),
        Case("file-name-secret", f'files=["src/password={pw}.py"]', (pw,)),
        Case("file-name-secret", f"src/client_secret={b64}.py", (b64,)),
        Case("file-name-secret", f"password={pw}.txt", (pw,)),
    ]  # fmt: skip


def secret_cases() -> list[Case]:
    cases = list(vendor_cases())
    for round_number in range(2):
        pw = rand(string.ascii_letters, 1) + rand(ALNUM + "!*-_", 13 + round_number)
        hex32, hex40, hex64 = rand(HEX, 32), rand(HEX, 40), rand(HEX, 64)
        cases += _urls(pw) + _commands(pw) + _headers(pw, hex40, rand(B64, 28) + "=")
        cases += _configs(pw, hex64) + _prose(pw)
        if round_number == 0:
            cases += _unprefixed(pw, hex32) + _blocks(pw)
    return cases + _separators()


def _innocent_generated() -> list[Case]:
    """Look-alikes with random parts: hashes, ids and digests as tools print them."""
    cases = []
    for _ in range(6):
        sha, short = rand(HEX, 40), rand(HEX, 7)
        uuid = "-".join(rand(HEX, n) for n in (8, 4, 4, 4, 12))
        digest = rand(HEX, 64)
        cases += [
            Case("git-sha", f"commit {sha}\nAuthor: Ada <ada@example.com>", ()),
            Case("git-sha", f"{short} Fix the flaky login test (#{_rng.randint(10, 999)})", ()),
            Case("git-sha", f"Merge: {short} {rand(HEX, 7)}\nfixed in {sha}", ()),
            Case("uuid", f"request_id={uuid} status=500 path=/api/orders", ()),
            Case("uuid", f'{{"id": "{uuid}", "name": "checkout"}}', ()),
            Case("digest", f"Digest: sha256:{digest}\nStatus: Downloaded newer image", ()),
            Case("digest", f"{digest}  dist/app-1.4.2.tar.gz", ()),
            Case("digest", f"image: ghcr.io/acme/api@sha256:{digest}", ()),
            Case("npm-integrity", f'"integrity": "sha512-{rand(B64, 86)}=="', ()),
            Case("go-sum", f"github.com/pkg/errors v0.9.1 h1:{rand(B64, 43)}=", ()),
            Case("pip-hash", f"requests==2.32.3 --hash=sha256:{digest}", ()),
            Case("etag", f'ETag: "{rand(HEX, 32)}"', ()),
            Case("trace-id", f"trace_id={rand(HEX, 32)} span_id={rand(HEX, 16)}", ()),
        ]
    return cases


PUBLIC_KEY = "AAAAC3NzaC1lZDI1NTE5AAAAIGz0QvV2aJ8kq7Xr3mN5pT1wY6sE4dF9hL2cB0uR8xKa"
CERT_BODY = "MIIBszCCAVmgAwIBAgIUQ3x9VHn5qXb2c1Yb1cT0z7W8mNowCgYIKoZIzj0EAwIw"

INNOCENT_TEXTS: tuple[tuple[str, str], ...] = (
    ("ssh-public-key", f"ssh-ed25519 {PUBLIC_KEY} ada@laptop"),
    ("ssh-public-key", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7{PUBLIC_KEY} ci@build"),
    ("ssh-public-key", f"Added key to ~/.ssh/authorized_keys: ecdsa-sha2-nistp256 {PUBLIC_KEY}"),
    ("public-pem", f"-----BEGIN PUBLIC KEY-----\n{CERT_BODY}\n-----END PUBLIC KEY-----"),
    ("certificate", f"-----BEGIN CERTIFICATE-----\n{CERT_BODY}\n-----END CERTIFICATE-----"),
    (
        "pgp-public",
        f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{CERT_BODY}\n-----END PGP PUBLIC KEY BLOCK-----",
    ),
    ("fingerprint", "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 (ED25519)"),
    ("placeholder", "export GITHUB_TOKEN=<your-token>"),
    ("placeholder", "api_key: ${API_KEY}"),
    ("placeholder", 'password: "{{ .Values.db.password }}"'),
    ("placeholder", "token = os.environ['GITHUB_TOKEN']"),
    ("placeholder", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    ("placeholder", "AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX"),
    ("placeholder", "sk_live_XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("placeholder", "DB_PASSWORD=changeme"),
    ("placeholder", "password: ********"),
    ("placeholder", "Authorization: Bearer $TOKEN"),
    ("placeholder", "Authorization: Bearer <token>"),
    ("placeholder", "curl -u $USER:$PASS https://api.example.com"),
    ("placeholder", "postgres://user:${PGPASSWORD}@db/shop"),
    ("placeholder", "mysql -u root -p"),
    ("placeholder", "docker login -u bob --password-stdin < token.txt"),
    ("placeholder", "SECRET_KEY=your-secret-key-here"),
    ("placeholder", "token: ${{ secrets.NPM_TOKEN }}"),
    ("placeholder", "password: !vault |"),
    ("placeholder", "api_key = None"),
    ("placeholder", "password = ''"),
    ("placeholder", "client_secret: null"),
    ("placeholder", "--password <password>"),
    ("placeholder", "https://user:password@host/db is the format"),
    ("placeholder", 'echo "$CR_PAT" | docker login ghcr.io -u bob --password-stdin'),
    ("placeholder", "cat ~/.docker/token | docker login -u bob --password-stdin"),
    ("placeholder", 'variable "db_password" {\n  type      = string\n  sensitive = true\n}'),
    ("placeholder", 'variable "db_password" { default = "${var.fallback}" }'),
    ("placeholder", "localhost:5432:*:postgres:*"),
    ("prose", "Reset the password in the admin panel, then log in again."),
    ("prose", "The token bucket refills 100 tokens per second."),
    ("prose", "Password is required and must be at least 12 characters."),
    ("prose", "The session token expired after an hour; refresh tokens last 30 days."),
    ("prose", "Never commit secrets. Use the vault; the API key is in 1Password."),
    ("prose", "We rotate keys every 90 days and store secrets in AWS Secrets Manager."),
    ("prose", "Bearer tokens must only be sent over HTTPS."),
    ("prose", "the password was rejected because it was too short"),
    ("prose", "Use pass or gopass for the team passwords."),
    ("prose", "The secret sauce is the cache warm-up."),
    ("prose", "Token count is 4096 for this model."),
    ("prose", "Password reset emails go through SendGrid."),
    ("prose", "AKIA marks long-term access keys and ASIA temporary ones."),
    ("prose", "GitHub tokens start with ghp_, gho_ or github_pat_."),
    ("prose", "Der Schlüssel liegt im Tresor — パスワードを忘れた 🙂"),
    ("prose", "the password: must be rotated monthly"),
    ("prose", "Password for admin: see the vault"),
    ("prose", "[sudo] password for ada: Sorry, try again."),
    ("i18n", '{"password": "Mot de passe", "password_hint": "At least 12 characters."}'),
    ("i18n", 'password: "Your password is too weak"'),
    ("code", "def check_password(password: str, hashed: bytes) -> bool:"),
    ("code", "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())"),
    ("code", "if token == expected_token:\n    return True"),
    ("code", "token = request.headers.get('Authorization')"),
    ("code", "self.api_key = api_key"),
    ("code", "connect(host=host, password=db_password)"),
    ("code", "const TOKEN_KEY = 'auth_token';"),
    ("code", "PASSWORD_MIN_LENGTH = 12"),
    ("code", "max_tokens: 4096\ntemperature: 0.2"),
    ("code", "secretName: tls-cert\nsecretKeyRef:\n  name: db-credentials\n  key: password"),
    ("code", "test_user_can_reset_password_with_a_valid_token_from_the_email"),
    ("code", "class PasswordResetTokenGenerator(PasswordResetTokenGeneratorBase):"),
    ("code", "export function useAuthToken(): string | undefined {"),
    ("code", "password = getpass.getpass('Password: ')"),
    ("code", 'os.environ["HOME"] = "/tmp"'),
    ("code", "password = get_password()"),
    ("code", 'creds["password"] = getpass.getpass()'),
    ("code", 'if creds["password"] == expected_password:'),
    ("code", 'variable "region" { default = "eu-west-1" }'),
    ("code", "token_type: bearer\nexpires_in: 3600"),
    ("code", "from django.contrib.auth.hashers import make_password"),
    ("code", "auth_header = f'Bearer {token}'"),
    ("code", "password_file=/run/secrets/db_password"),
    ("code", "$ pwd\n/home/ada/projects/shop"),
    ("code", 'Token:              "#f8f8f2",'),
    ("code", '{"mask_token": "[MASK]", "bos_token": "<s>", "eos_token": "</s>"}'),
    ("code", "sk-learn-compatible-estimator-interface"),
    ("code", "ssh -p 2222 deploy@10.0.0.5"),
    ("code", "docker run -u 1000:1000 -p 8080:80 nginx:1.27"),
    ("code", "kubectl port-forward svc/api 8080:80 -n shop"),
    ("code", "pg_dump -h db -p 5432 -U app shop > shop.sql"),
    ("code", "git push origin feature/password-reset --force-with-lease"),
    ("code", "npm install --save-dev @types/jsonwebtoken"),
    ("code", "pytest tests/auth/test_tokens.py -k 'refresh and not expired' -x"),
    ("code", "grep -r 'api_key' src/ --include=*.py"),
    ("code", "ls -la ~/.aws/credentials"),
    ("code", "curl -u bob https://api.example.com   # prompts for the password"),
    (
        "config",
        "kind: ConfigMap\napiVersion: v1\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: a,b\n",
    ),
    ("config", "apiVersion: v1\nkind: Service\nspec:\n  ports:\n  - port: 443\n"),
    (
        "config",
        "kubectl get secrets\nNAME        TYPE     DATA   AGE\ndb-creds    Opaque   2      3d",
    ),
    ("config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true"),
    ("config", "sort_key=created_at\nprimary_key=True\ncache_key = 'user:1234:profile'"),
    ("config", "key=name\nkey_id=prod-signing-2024"),
    ("config", "PWD=/home/dev/project\nSHELL=/bin/bash"),
    ("public-id", "pk_live_51HqLyjWDarjtT1zdp7dcXsd6ntMZ0hMtuB8kHqZr"),
    ("public-id", "mapbox public token pk.eyJ1IjoiYWRhIiwiYSI6ImNqeDl6eTAwMDAwMDAifQ.Zm9vYmFy"),
    (
        "public-id",
        "client_id: 123456789012-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com",
    ),
    ("public-id", "arn:aws:iam::123456789012:role/deploy-role"),
    ("public-id", "https://3f2a9c1b7e4d5f60@o123456.ingest.sentry.io/4504"),
    ("public-id", "AWS account 123456789012, region eu-west-1, bucket acme-prod-logs"),
    ("public-id", "Twilio account AC followed by the SID; see the console"),
    ("url", "https://example.com/path?x=1&sort=desc#top"),
    ("url", "git@github.com:acme/api.git and https://bob@github.com/acme/api"),
    ("url", "http://localhost:8080/api?token_type=bearer"),
    ("url", "https://localhost:3000/users/@alice"),
    ("url", "https://registry.npmjs.org:443/@scope/pkg"),
    ("url", "https://en.wikipedia.org/wiki/Password#History"),
    ("url", "http://[2001:db8::1]:8080/path"),
    ("url", "postgres://admin@[2001:db8::1]:5432/prod"),
    ("url", "https://app.example.com/search?q=password&sort=desc"),
    ("cookie", "Set-Cookie: SameSite=Strict"),
    ("cookie", "Set-Cookie: theme=dark; Path=/; Secure; HttpOnly; SameSite=Lax"),
    ("cookie", "Set-Cookie: session=deleted; Expires=Thu, 01 Jan 1970 00:00:00 GMT"),
    ("cookie", "Cookie: lang=en-US; theme=dark"),
    ("cookie", "curl -c cookies.txt -b cookies.txt https://app.example.com/login"),
    ("cookie", 'curl -b "theme=dark; lang=en-US" https://app.example.com'),
    ("cookie", 'curl -b "$COOKIE_JAR" https://app.example.com'),
    ("colons", "a:1:b:c:d"),
    ("colons", "WARNING:1234:main:worker:Restarting"),
    ("colons", "2024:05:01:12:30"),
    ("url", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"),
    ("log", "2024-05-01T12:00:00Z INFO auth: token refreshed for user 42 in 12ms"),
    ("log", "WARN password policy: 3 users have passwords older than 90 days"),
    ("log", "Successfully built 3f2a9c1b7e4d\nSuccessfully tagged acme/api:1.4.2"),
    ("log", "added 312 packages, and audited 313 packages in 4s"),
    ("log", "Version: 1.4.2-rc.1+build.20240501.3f2a9c1"),
    ("log", "PID 48213 listening on 0.0.0.0:5432"),
    ("markdown", "# Secrets\n\n- **Never** log the `password`.\n- Rotate tokens. 🔐"),
    ("markdown", "| user | password |\n|------|----------|\n| admin | in vault |"),
    ("markdown", "The `--password` flag is deprecated; use `--password-stdin`."),
    ("markdown", "Set `Authorization: Bearer <token>` on every request."),
    ("jwt-prose", "A JWT starts with eyJ because base64 of '{\"' begins that way."),
    ("private-markers", '_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"'),
    ("css", "color: #ff00aa; background: #0a0b0c;"),
    ("math", "x = 0x7fffffff; mask = 0xdeadbeefcafebabe"),
    ("version", "numpy==2.4.6 pandas>=2.2,<3 torch==2.5.1+cu121"),
    ("path", "See src/auth/token_store.py and tests/auth/test_keys.py."),
    ("path", "/var/lib/docker/overlay2/3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345abcdef/merged"),
    ("prose", "password: the one in the vault"),
    ("prose", "password: see 1Password"),
    ("prose", "db:\n  password: same as staging, ask ops\n"),
    ("prose", "password: stored in the team vault"),
    ("prose", "passphrase: four random words joined"),
    ("prose", "password: rotated every ninety days"),
    ("prose", "Password: Correct Horse Battery Staple is the classic xkcd example."),
    ("code", "f(user, password=PasswordField)"),
    ("code", "self.password=PasswordHasher"),
    ("code", "password=PASSWORD_ENV"),
    ("code", "db_password=DummyValue"),
    ("public-id", '"client_email": "deploy@acme-prod.iam.gserviceaccount.com"'),
    ("public-id", '"kid": "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345"'),
    ("prose", "password: see the vault"),
    ("prose", "Password: CamelCase is our naming rule"),
    ("prose", "Password: Reset Email Template Update"),
    ("prose", "the password is stored in the team vault"),
    ("prose", "The password is hashed with bcrypt before storage."),
    ("code", "class Settings(BaseSettings):\n    password: SecretStr\n    token: TokenPayload\n"),
    ("code", "  password: HashedValue"),
    ("code", "interface Login {\n  password: PasswordInput;\n}"),
    ("code", "const API_KEY=SomeConst;"),
    ("digest", "the cache key 5d41402abc4b2a76b9719d911017c592 was evicted"),
    ("digest", "the key is 5d41402abc4b2a76b9719d911017c592"),
    ("fingerprint", "GPG key 9DC858229FC7DD38854AE2D88D81803C0EBFCD88 imported"),
    ("code", "hf_ModelLoaderConfigurationForTransformers = load()"),
    ("code", "oat_ThisIsTheConfigurationLoaderForTheWholeApp"),
    ("secret-name", "kubectl get secret db-creds -o yaml"),
    ("secret-name", "kubectl describe secret my-app-tls"),
    ("secret-name", "gcloud secrets versions access latest --secret=api-key"),
    ("digest", "cache_key=3f786850e387550fdab836ed7e6dc881de23001b"),
    ("digest", "cache_key: 9c1b7e4d5f60718293a4b5c6d7e8f901 for the build"),
    ("prose", "api_key: from the environment, not the repo"),
    ("prose", "credentials: OAuth2-based with a refresh token"),
    ("prose", "the api_key is stored in vault for staging"),
    ("prose", "secret_key -> rotate monthly"),
    ("path", "password=password_reset.py"),
    ("path", "template: password_reset.py"),
    ("code", "api_key: AWS_PROFILE in CI"),
    ("prose", "encryption_key: AES256 for backups"),
    ("prose", "signing_key is HMAC-SHA256 based"),
    ("path", "private_key: id_ed25519 for github"),
    ("path", "password=reset_v2.py"),
    ("secret-name", "kubectl get secret db-creds-7f9k2 -o yaml"),
)


def innocent_cases() -> list[Case]:
    return _innocent_generated() + [Case(family, text, ()) for family, text in INNOCENT_TEXTS]


def _split(text: str, secrets: tuple[str, ...]) -> str:
    """Insert the joint after each secret's first four characters (see the module doc)."""
    for secret in secrets:
        if len(secret) >= 8:
            text = text.replace(secret, secret[:4] + JOINT + secret[4:])
    return text


def write_corpus(path: Path = CORPUS) -> int:
    cases = secret_cases() + innocent_cases()
    with path.open("w", encoding="utf-8") as out:
        for number, case in enumerate(cases, 1):
            record = {
                "id": number,
                "family": case.family,
                "text": _split(case.text, case.secrets),
                "secrets": [_split(secret, (secret,)) for secret in case.secrets],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(cases)


def load_corpus(path: Path = CORPUS) -> list[Case]:
    """The corpus with the joints removed."""
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        secrets = tuple(secret.replace(JOINT, "") for secret in record["secrets"])
        cases.append(Case(record["family"], record["text"].replace(JOINT, ""), secrets))
    return cases


if __name__ == "__main__":
    print(f"{write_corpus()} cases written to {CORPUS}")
