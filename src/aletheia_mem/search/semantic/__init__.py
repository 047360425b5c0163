"""Optional semantic recall: a local sentence-embedding model fused with BM25.

Importing this package is cheap: it never imports numpy or the model. ``find_model`` tells whether
the ``semantic`` extra is installed; ``SemanticRecall`` (in ``recall.py``) loads it in the
background the first time it is asked.
"""

from __future__ import annotations

from aletheia_mem.search.semantic.model import Embedder, ModelFiles, SemanticSource, find_model

__all__ = ["Embedder", "ModelFiles", "SemanticSource", "find_model"]
