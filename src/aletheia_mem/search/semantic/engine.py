"""Semantic recall that never blocks: a background thread loads the model and embeds memories.

Lifecycle: nothing happens until the first ``rank`` (or ``start``) or ``notice_saved``. Then a
daemon thread loads the model (after ``SETTLE_SECONDS`` when a save started it), reads the vectors
already stored for it into an in-memory index, and embeds every memory that lacks a current
vector, in small batches, forever catching up with new saves (its own process's, which wake it,
and other processes', which it polls for). Until the model is loaded, ``rank`` answers None and
search uses BM25 alone; saves never wait for any of this. One process at a time embeds for a
model (a lease in the database, held for a pass), the others read its vectors.

This module imports no numpy at import time: the model code is imported by the worker thread, so
that starting the stdio server stays as fast as without the extra.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aletheia_mem.search.semantic.model import Embedder, ModelFiles, find_model
from aletheia_mem.storage.vectors import PendingMemory, VectorStore

if TYPE_CHECKING:
    from aletheia_mem.search.semantic.index import VectorIndex

logger = logging.getLogger("aletheia.semantic")
BATCH = 4  # small: closing waits for the batch in hand (an onnxruntime run cannot be cut short)
LEASE_MS = 60_000
POLL_SECONDS = 30.0
# A save starts the worker, which loads the model this long after unless a search asks first:
# loading (numpy, onnxruntime, the weights: 0.3 to 0.4 s, much of it holding the GIL) then
# misses the calls around the save, and a process that ends right after saving never loads it.
SETTLE_SECONDS = 1.0
# How long closing waits for a model load under way (0.3 to 0.4 s here, seconds on a busy
# machine): a process that exits meanwhile aborts inside onnxruntime's set-up.
LOAD_WAIT_SECONDS = 30.0
QUERY_CACHE = 256
# Pseudo-relevance feedback: the query moves toward its nearest memories, then the first pass's
# top hits are scored again. Measured on bench/retrieval (fused, both halves of the queries):
# paraphrase MRR 0.127 -> 0.169, R@10 0.266 -> 0.376, exact, identifier and temporal unchanged.
FEEDBACK_ROWS = 2
FEEDBACK_WEIGHT = 0.5
_CATCH_UP_PAGE = 20_000
Loader = Callable[[ModelFiles], Embedder]


def memory_text(memory: PendingMemory) -> str:
    """What gets embedded: title, text and narrative, one vector per memory.

    Measured on bench/retrieval (paraphrase queries, the model alone, no feedback): the first 128
    or 64 tokens instead of 256 change MRR by under 0.01 (0.196, 0.211 vs 0.202); one vector per
    paragraph (title prefixed, 2.2 per memory) scored by the best of them and the whole text's
    lifts MRR 0.202 -> 0.244 and R@10 0.376 -> 0.440 (0.241 and 0.468 with feedback), at twice
    the embedding work and index rows; the mean of those paragraph vectors as the one vector does
    not (0.195). One vector per sentence (title prefixed, 3.7 per memory) with the whole text's
    gives 0.251 and 0.477, the first two sentences only 0.234: the gain is spread over every
    sentence, at nearly five times the rows (720 MB of vectors at 100,000 memories). Splitting at
    line breaks as well (6.2 pieces per memory, the changelog bullets apart) gives only 0.207 and
    0.468, and fused search 0.210 and 0.376 (0.194 and 0.404 today), the same when only the top
    100 by the whole text's vector are scored again by their pieces."""
    return "\n".join(part for part in (memory.title, memory.text, memory.narrative) if part)


def load_minilm(files: ModelFiles) -> Embedder:
    """The all-MiniLM-L6-v2 embedder: onnxruntime when installed (the extra brings it) and the
    weights are the ONNX file, else numpy (single-threaded BLAS, faster for its small matrices
    and leaving the other cores to the server). Both give the same vectors."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if files.weights.suffix == ".onnx" and importlib.util.find_spec("onnxruntime") is not None:
        from aletheia_mem.search.semantic.minilm_ort import OrtMiniLM  # off the start path

        return OrtMiniLM(files)
    from aletheia_mem.search.semantic.minilm import MiniLM  # off the start path

    return MiniLM(files)


def _lower_priority() -> None:
    """Make the calling thread yield the CPU to request threads (Linux: threads are tasks with
    their own nice value), so that embedding in the background never slows saves or searches."""
    if hasattr(os, "setpriority"):
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:  # not allowed here: run at normal priority
            logger.debug("could not lower the embedding thread's priority", exc_info=True)


def open_semantic(db_path: Path) -> SemanticEngine | None:
    """Semantic recall over this store when the extra is installed, else None (nothing loads
    until the first search or save)."""
    files = find_model()
    return None if files is None else SemanticEngine(db_path, files)


class SemanticEngine:
    """Semantic recall over one store file: ``rank`` for search, a worker for indexing."""

    def __init__(self, db_path: Path, files: ModelFiles, loader: Loader = load_minilm) -> None:
        self.files = files
        self._loader = loader
        self._query_vectors: OrderedDict[str, Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._vectors = VectorStore(db_path)
        self._holder = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._embedder: Embedder | None = None
        self._index: VectorIndex | None = None
        self._seq = 0
        self._known_newest = -1
        self._seq_lock = threading.Lock()
        self._ready = threading.Event()
        self._idle = threading.Event()
        self._wake = threading.Event()
        self._load_now = threading.Event()
        self._loading = threading.Event()  # the model is being loaded: close waits for it
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.failed = False

    # -- what search calls -------------------------------------------------------------------

    def rank(
        self,
        text: str,
        projects: tuple[str, ...] | None,
        depth: int,
        candidates: Sequence[int] = (),
        feedback: bool = False,
    ) -> list[tuple[int, float]] | None:
        """The memories most similar to ``text`` (see ``SemanticSource.rank``), or None while the
        model is not loaded yet."""
        if not self._ready.is_set():
            self.start()
            return None
        embedder, index = self._embedder, self._index
        if embedder is None or index is None:
            return None
        self._notice_new_memories()
        self.catch_up()
        query = self._query_vector(embedder, text)
        if feedback and depth > 0:
            first = [memory_id for memory_id, _ in index.top(query, 2 * depth, projects)]
            query = index.moved_toward(query, first[:FEEDBACK_ROWS], FEEDBACK_WEIGHT)
            again = index.similarities(query, first)
            top = sorted(again.items(), key=lambda pair: -pair[1])[:depth]
        else:
            top = index.top(query, depth, projects) if depth > 0 else []
        seen = {memory_id for memory_id, _ in top}
        extra = index.similarities(query, [i for i in candidates if i not in seen])
        return top + sorted(extra.items(), key=lambda pair: -pair[1])

    def embed_query(self, text: str) -> None:
        """Embed ``text`` into the query cache, when the model is loaded."""
        embedder = self._embedder
        if self._ready.is_set() and embedder is not None:
            self._query_vector(embedder, text)

    def _query_vector(self, embedder: Embedder, text: str) -> Any:
        """The query's vector; agents repeat queries (search, then timeline), so recent ones are
        kept."""
        with self._cache_lock:
            vector = self._query_vectors.get(text)
        if vector is None:
            vector = embedder.embed([text])[0]
            with self._cache_lock:
                self._query_vectors[text] = vector
                if len(self._query_vectors) > QUERY_CACHE:
                    self._query_vectors.popitem(last=False)
        return vector

    def start(self) -> None:
        """Start the worker thread (once), loading the model at once."""
        self._load_now.set()
        self._spawn()

    def notice_saved(self) -> None:
        """Memories were saved or changed: embed them soon, whether or not anything searches.

        A signal, never a wait: it wakes the worker, or starts it (a thread start, ~0.1 ms),
        which loads the model ``SETTLE_SECONDS`` later, in that thread."""
        self._wake.set()
        self._spawn()

    def _spawn(self) -> None:
        with self._start_lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(target=self._run, name="aletheia-embedder", daemon=True)
            self._thread.start()
            atexit.register(self.close)

    def load_for_query(self) -> bool:
        """Load the model in the calling thread and read the stored vectors, starting no worker:
        a one-shot search (the CLI's) then embeds its query alone. False when loading failed."""
        with self._start_lock:
            if not self._ready.is_set() and not self.failed:
                try:
                    self._load()
                except Exception:  # the model is broken: search goes on with BM25 alone
                    self.failed = True
                    logger.exception("semantic recall could not load; search uses BM25 alone")
        return self._ready.is_set()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the model is loaded (for tools and tests); False on timeout."""
        self.start()
        return self._ready.wait(timeout)

    def wait_caught_up(self, timeout: float) -> bool:
        """Block until every memory saved so far has a vector in the index (for tools and
        tests); False on timeout or when the worker failed."""
        deadline = time.monotonic() + timeout
        if not self.wait_ready(timeout) or self._embedder is None:
            return False
        model = self._embedder.model_id
        while True:
            if not self._vectors.pending(model, 1):
                self.catch_up()
                return True
            remaining = deadline - time.monotonic()
            if self.failed or remaining <= 0:
                return False
            self._idle.clear()
            self._wake.set()
            self._idle.wait(min(remaining, 1.0))

    def close(self) -> None:
        """Stop the worker (waiting briefly for its batch, or for a model load under way: the
        load cannot be cut short, and a process that exits while onnxruntime sets up aborts)
        and close connections."""
        self._stop.set()
        self._wake.set()
        self._load_now.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2)
            if thread.is_alive() and self._loading.is_set():  # a load began, or was under way
                thread.join(timeout=LOAD_WAIT_SECONDS)
        atexit.unregister(self.close)
        self._vectors.close()

    # -- the index ---------------------------------------------------------------------------

    def catch_up(self) -> int:
        """Read vectors written since the last look (by any process) into the index."""
        embedder, index = self._embedder, self._index
        if embedder is None or index is None:
            return 0
        import numpy as np  # loaded already by the model

        added = 0
        with self._seq_lock:
            while True:
                rows = self._vectors.vectors_since(embedder.model_id, self._seq, _CATCH_UP_PAGE)
                if not rows:
                    return added
                vectors = np.frombuffer(b"".join(r.vector for r in rows), dtype=np.float32)
                index.add(
                    [r.memory_id for r in rows],
                    [r.project for r in rows],
                    vectors.reshape(len(rows), index.dim),
                )
                self._seq = rows[-1].seq
                added += len(rows)

    def _notice_new_memories(self) -> None:
        newest = self._vectors.newest_memory_id()
        if newest != self._known_newest:
            self._known_newest = newest
            self._wake.set()

    # -- the worker --------------------------------------------------------------------------

    def _run(self) -> None:
        _lower_priority()
        try:
            self._load_now.wait(SETTLE_SECONDS)
            if self._stop.is_set():  # closed while settling: nothing was loaded
                return
            self._load()
            self._work()
        except Exception:  # the top of a thread: log, and search goes on with BM25 alone
            self.failed = True
            if not self._stop.is_set():
                logger.exception("semantic recall stopped; search uses BM25 alone")
        finally:
            self._idle.set()
            try:
                if self._embedder is not None:
                    self._vectors.release_lease(self._embedder.model_id, self._holder)
            except Exception:  # closing down: nothing left to tell
                logger.debug("could not release the embedding lease", exc_info=True)

    def _load(self) -> None:
        from aletheia_mem.search.semantic.index import VectorIndex

        self._loading.set()
        try:
            embedder = self._loader(self.files)
        finally:
            self._loading.clear()
        self._index = VectorIndex(embedder.dim)
        self._embedder = embedder
        self.catch_up()
        self._ready.set()

    def _work(self) -> None:
        # Each pass walks the memories once (a cursor, so a long catch-up never rescans); a pass
        # starts when woken (a save here, new memories noticed by a search) or every POLL_SECONDS.
        # The lease is let go after each pass: another process (the HTTP server's other worker,
        # another session's stdio server) then embeds its own saves at once, not at this one's
        # next poll.
        while not self._stop.is_set():
            cursor = 0
            while not self._stop.is_set():
                cursor = self._embed_batch(cursor)
                if not cursor:
                    break
            embedder = self._embedder
            if embedder is not None and not self._stop.is_set():  # closing: ``_run`` lets go
                self._vectors.release_lease(embedder.model_id, self._holder)
            self.catch_up()
            self._idle.set()
            self._wake.wait(POLL_SECONDS)
            self._wake.clear()

    def _embed_batch(self, after_id: int) -> int:
        """Embed the next batch of memories past ``after_id`` that lack a vector.

        Returns the last id embedded, or 0 when there is nothing to do here (all caught up, or
        another process holds the lease and embeds for everyone).
        """
        embedder = self._embedder
        if embedder is None:
            return 0
        now = int(time.time() * 1000)
        if not self._vectors.take_lease(embedder.model_id, self._holder, now, LEASE_MS):
            return 0
        pending = self._vectors.pending(embedder.model_id, BATCH, after_id)
        if not pending:
            return 0
        vectors = embedder.embed([memory_text(memory) for memory in pending])
        if self._stop.is_set():  # closing: the store may be gone
            return 0
        self._vectors.put(
            embedder.model_id,
            [(memory, vector.tobytes()) for memory, vector in zip(pending, vectors, strict=True)],
        )
        return pending[-1].id
