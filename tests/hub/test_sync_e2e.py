"""`aletheia sync` processes against a real hub: concurrent syncs, a kill midway, limits, TLS.

The syncs between stores run with the hub's store in a SQLite file and in PostgreSQL.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import dismissals, facts, memories, rules, worklists
from aletheia_mem.storage.sqlite import SqliteStore
from tests.hub.helpers import WAIT_SECONDS, running_hub
from tests.hub.sync_helpers import counts_at, items_at

pytestmark = pytest.mark.e2e
SYNC_SECONDS = 60


@pytest.fixture(params=["sqlite", "postgres"])
def hub_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The hub's store: a SQLite file, or a PostgreSQL schema's URL."""
    if request.param == "sqlite":
        return tmp_path / "hub.db"
    return str(request.getfixturevalue("pg_url"))


def _env(data_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    return {**env, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), "NO_COLOR": "1"}


def _sync_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "aletheia_mem", "sync", *args]


def run_sync(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _sync_command(*args),
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=SYNC_SECONDS,
        check=False,
    )


def open_store(data_dir: Path) -> SqliteStore:
    return SqliteStore(data_dir / "aletheia.db")


def save_notes(data_dir: Path, texts: list[str], project: str = "shop") -> None:
    store = open_store(data_dir)
    try:
        for text in texts:
            item = memories.MemoryInput(text=text, project=project, tool="test")
            memories.save_memory(store, system_clock, item)
    finally:
        store.close()


def kill_after(data_dir: Path, marker: str, *args: str) -> str:
    """Run a sync, SIGKILL it once its progress shows ``marker``; returns what it printed."""
    process = subprocess.Popen(
        _sync_command(*args, "--progress"),
        env=_env(data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in iter(process.stderr.readline, "")],  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    seen: list[str] = []
    try:
        while not any(marker in line for line in seen):
            seen.append(lines.get(timeout=SYNC_SECONDS))
        process.send_signal(signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=WAIT_SECONDS)
        reader.join(timeout=WAIT_SECONDS)
        process.stderr.close()  # type: ignore[union-attr]
    assert process.returncode == -signal.SIGKILL
    return "".join(seen)


def test_three_stores_syncing_at_once_end_with_exactly_the_same_items(
    tmp_path: Path, hub_db: Path | str
) -> None:
    dirs = {name: tmp_path / name for name in ("a", "b", "c")}
    for folder in dirs.values():
        folder.mkdir()
    save_notes(dirs["a"], [f"a note {i}" for i in range(30)] + ["Staging needs the VPN"])
    save_notes(dirs["b"], [f"b note {i}" for i in range(30)], project="web")
    save_notes(dirs["b"], ["Staging needs the VPN"])
    save_notes(dirs["c"], [f"c note {i}" for i in range(10)])
    a, b, c = (open_store(dirs[name]) for name in ("a", "b", "c"))
    try:
        facts.record_fact(
            a, project="shop", subject="db", predicate="is", object="sqlite",
            valid_from=None, source="t", now=system_clock(),
        )  # fmt: skip
        facts.record_fact(
            a, project="shop", subject="db", predicate="is", object="postgres",
            valid_from=None, source="t", now=system_clock() + 10,
        )  # fmt: skip
        rules.add_rule(
            a, rules.RuleInput("Run tests", "you commit", "everywhere", "", [1], [1], "t"), 1
        )
        worklists.write_list(a, system_clock, project="shop", name="todo", items=["a"], tool="t")
        worklists.write_list(b, system_clock, project="shop", name="todo", items=["b"], tool="t")
        dismissals.set_dismissed(
            b, item_type="memory", item_id=1, dismiss=True, reason="dup", actor="t", now=1
        )
        episode = c.start_episode("shop", "codex", system_clock())
        c.add_request(episode, "fix the build", system_clock())
        c.add_request(episode, "then ship it", system_clock() + 1)
    finally:
        for store in (a, b, c):
            store.close()
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        args = ("--hub", hub.url, "--token", token, "--page-size", "7")
        for _ in range(2):  # two rounds of all three at once
            running = [
                subprocess.Popen(
                    _sync_command(*args),
                    env=_env(folder),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for folder in dirs.values()
            ]
            for process in running:
                _out, err = process.communicate(timeout=SYNC_SECONDS)
                assert process.returncode == 0, err
        for folder in dirs.values():  # then one by one until nothing is new anywhere
            assert run_sync(folder).returncode == 0
    expected = items_at(hub_db)
    for name, folder in dirs.items():
        assert items_at(folder / "aletheia.db") == expected, name
    counts = counts_at(hub_db)
    assert counts == {
        "memories": 30 + 30 + 10 + 1 + 1,  # the VPN note and the todo list merged
        "facts": 2,
        "rules": 1,
        "episodes": 1,
        "episode_requests": 2,
    }
    for folder in dirs.values():
        assert counts_at(folder / "aletheia.db") == counts


def test_a_sync_killed_midway_resumes_and_nothing_is_lost_or_doubled(
    tmp_path: Path, hub_db: Path | str
) -> None:
    sender, receiver = tmp_path / "sender", tmp_path / "receiver"
    sender.mkdir()
    receiver.mkdir()
    save_notes(sender, [f"note number {i}" for i in range(1500)])
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        token = hub.token("admin", None, "killer")
        args = ("--hub", hub.url, "--token", token, "--page-size", "50")
        kill_after(sender, "(page 4)", *args)
        assert 0 < counts_at(hub_db)["memories"] < 1500
        finished = run_sync(sender, *args)
        assert finished.returncode == 0, finished.stderr
        kill_after(receiver, "(page 6)", *args)
        assert 0 < counts_at(receiver / "aletheia.db")["memories"] < 1500
        finished = run_sync(receiver, *args)
        assert finished.returncode == 0, finished.stderr
        assert "pushed 0 item(s)" in finished.stdout
        again = run_sync(sender)  # the remembered hub
        assert again.returncode == 0 and "pushed 0 item(s), pulled 0" in again.stdout
    expected = items_at(hub_db)
    assert len(expected) == 1500
    assert items_at(sender / "aletheia.db") == expected == items_at(receiver / "aletheia.db")
    assert counts_at(receiver / "aletheia.db")["memories"] == 1500


def test_sync_carries_only_the_tokens_projects(tmp_path: Path, hub_db: Path | str) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    save_notes(one, ["shop fact"])
    save_notes(one, ["billing plan"], project="billing")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        token = hub.token("sync", ("shop",), "shop-only")
        for folder in (one, two):
            done = run_sync(folder, "--hub", hub.url, "--token", token)
            assert done.returncode == 0, done.stderr
        assert "(shop)" in done.stdout
    projects = {data["project"] for data in items_at(two / "aletheia.db").values()}
    assert projects == {"shop"}
    assert {data["project"] for data in items_at(hub_db).values()} == {"shop"}


def test_sync_needs_a_sync_or_admin_token(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("mcp", ("shop",), "reader")
        refused = run_sync(tmp_path, "--hub", hub.url, "--token", token)
        unknown = run_sync(tmp_path, "--hub", hub.url, "--token", "alt_nope")
    assert refused.returncode == 5
    assert "This token cannot sync" in refused.stderr
    assert unknown.returncode == 5 and "(401)" in unknown.stderr


def test_sync_from_an_address_that_failed_too_often_stops_at_once_as_refused(
    tmp_path: Path,
) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        statuses = [hub.post("/sync/hello", {}, "alt_wrong").status for _ in range(21)]
        begun = time.monotonic()
        result = run_sync(tmp_path, "--hub", hub.url, "--token", "alt_wrong")
        seconds = time.monotonic() - begun
    assert statuses[0] == 401 and statuses[-1] == 429
    assert result.returncode == 5, result.stderr
    assert result.stderr.startswith(
        "Error: The hub refused the request (429): Too many failed authentications from this"
        " address. Retry in "
    )
    assert result.stderr.rstrip().endswith("s with a valid token.")
    assert "waiting" not in result.stderr and seconds < 10  # no wait on the token's rate limit


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "hub.crt", folder / "hub.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_the_hub_serves_mcp_and_sync_over_tls(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    local = tmp_path / "local"
    local.mkdir()
    save_notes(local, ["over tls"])
    with running_hub(
        tmp_path / "hub.db", "--tls-cert", str(cert), "--tls-key", str(key), ca_file=str(cert)
    ) as hub:
        assert hub.url.startswith("https://127.0.0.1:")
        token = hub.token("sync", ("shop",), "tls")
        session = hub.initialize(token)
        hub.call_tool(token, session, "save_memory", text="Saved by a remote agent")
        untrusted = run_sync(local, "--hub", hub.url, "--token", token)
        done = run_sync(local, "--hub", hub.url, "--token", token, "--ca-file", str(cert))
        found, is_error = hub.call_tool(token, session, "search", query="tls")
    assert untrusted.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in untrusted.stderr
    assert done.returncode == 0, done.stderr
    assert not is_error and "over tls" in found
    texts = {data["text"] for data in items_at(local / "aletheia.db").values()}
    assert texts == {"over tls", "Saved by a remote agent"}
