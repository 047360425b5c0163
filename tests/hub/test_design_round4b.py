"""Round 4b audit of DESIGN 11 and docs/remote-mcp.md, from outside: real hubs, real `aletheia`.

mcp-protocol.md H12/H13 (Streamable HTTP, security warning): an `Origin` that is present and
invalid MUST get 403, and an unknown `Host` is refused (421), on every request; docs/remote-mcp.md:
"any other Host gets 421, an unknown browser Origin 403: DNS-rebinding protection".

docs/remote-mcp.md: "With a self-signed certificate, give clients the certificate as the CA:
`ALETHEIA_HUB_TOKEN=alt_... aletheia sync --hub URL --ca-file hub.crt` (remembered with the
hub)." docs/sync.md: "The hub and token (and `--ca-file`) are remembered, so later runs are just
`aletheia sync`".
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.hub.helpers import Hub, running_hub
from tests.hub.test_sync_e2e import _self_signed, items_at, save_notes

pytestmark = pytest.mark.e2e
SYNC_SECONDS = 60


def _sync(
    data_dir: Path, cwd: Path, *args: str, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    env.update({"ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), "NO_COLOR": "1"})
    if token is not None:
        env["ALETHEIA_HUB_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "sync", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=SYNC_SECONDS,
        check=False,
    )


def test_a_remembered_ca_file_serves_later_syncs_from_any_folder_and_with_the_token_set(
    tmp_path: Path,
) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    cert, key = _self_signed(certs)
    local, elsewhere = tmp_path / "local", tmp_path / "elsewhere"
    local.mkdir()
    elsewhere.mkdir()
    save_notes(local, ["first note"])
    with running_hub(
        tmp_path / "hub.db", "--tls-cert", str(cert), "--tls-key", str(key), ca_file=str(cert)
    ) as hub:
        token = hub.token("sync", ("shop",), "tls")
        # As the doc writes it: the token in the environment, the CA file named as it lies here.
        first = _sync(local, certs, "--hub", hub.url, "--ca-file", cert.name, token=token)
        save_notes(local, ["second note"])
        # The user keeps ALETHEIA_HUB_TOKEN exported and runs just `aletheia sync` elsewhere.
        with_token = _sync(local, elsewhere, token=token)
        save_notes(local, ["third note"])
        without_token = _sync(local, elsewhere)
        session = hub.initialize(token)
        found, is_error = hub.call_tool(token, session, "search", query="note", limit=10)
    assert first.returncode == 0, first.stderr
    assert with_token.returncode == 0, with_token.stderr
    assert without_token.returncode == 0, without_token.stderr
    assert not is_error and all(word in found for word in ("first", "second", "third"))
    texts = {data["text"] for data in items_at(local / "aletheia.db").values()}
    assert {"first note", "second note", "third note"} <= texts


def test_a_ca_file_that_is_no_certificate_is_one_error_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    local = tmp_path / "local"
    local.mkdir()
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n", encoding="utf-8")
    done = _sync(
        local, tmp_path, "--hub", "https://127.0.0.1:9", "--ca-file", str(not_pem), token="alt_x"
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert str(not_pem) in done.stderr


def _raw_post(hub: Hub, path: str, headers: dict[str, str]) -> int:
    """POST one ping to ``path`` with exactly these extra headers; the HTTP status."""
    parts = urlsplit(hub.url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        connection.request("POST", path, body, {"Content-Type": "application/json", **headers})
        reply = connection.getresponse()
        reply.read()
        return reply.status
    finally:
        connection.close()


@pytest.mark.parametrize("path", ["/mcp", "/sync/hello"])
def test_a_foreign_origin_or_host_is_refused_as_such_with_or_without_a_token(
    tmp_path: Path, path: str
) -> None:
    evil_origin = {"Origin": "http://evil.example.com"}
    evil_host = {"Host": "evil.example.com"}
    with running_hub(tmp_path / "hub.db") as hub:
        token = {"Authorization": f"Bearer {hub.token('admin', None, 'rebind')}"}
        wrong = {"Authorization": "Bearer alt_not_a_token"}
        statuses = {
            "origin, no token": _raw_post(hub, path, evil_origin),
            "origin, wrong token": _raw_post(hub, path, {**evil_origin, **wrong}),
            "origin, token": _raw_post(hub, path, {**evil_origin, **token}),
            "host, no token": _raw_post(hub, path, evil_host),
            "host, token": _raw_post(hub, path, {**evil_host, **token}),
            "loopback origin, no token": _raw_post(hub, path, {"Origin": hub.url}),
        }
    assert statuses == {
        "origin, no token": 403,
        "origin, wrong token": 403,
        "origin, token": 403,
        "host, no token": 421,
        "host, token": 421,
        "loopback origin, no token": 401,
    }


def test_a_tls_pair_that_cannot_serve_is_one_line_and_exit_2_not_a_traceback(
    tmp_path: Path,
) -> None:
    cert, key = _self_signed(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    _, other_key = _self_signed(other)
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("not a certificate\n", encoding="utf-8")
    hub = [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", str(tmp_path / "h.db")]
    for pair in ((not_pem, key), (cert, not_pem), (cert, other_key)):
        done = subprocess.run(
            [*hub, "--port", "0", "--tls-cert", str(pair[0]), "--tls-key", str(pair[1])],
            env={**os.environ, "ALETHEIA_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=SYNC_SECONDS,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith("aletheia-sync: --tls-cert/--tls-key"), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
