"""TREC run files named on the Compare page (paths, folders, uploads), scored in the background.

Reading two full-size runs takes seconds, so the page starts a `tempo_eval_app.jobs` job (a
thread calling `tempo_eval.trec_scores.score_trec_files` with a progress callback) and shows its
progress. Results are kept per content: the job hashes the files' bytes first (SHA-256) and a
finished result for the same bytes and settings is reused, whatever the files are called. Each
result keeps NDCG@1..100 per run and query, so every k is a slice, never a new read.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from tempo_eval_app import jobs

#: the largest k the page offers: every result holds the curves up to it
MAX_K = 100
#: finished results kept in memory
CACHE_ENTRIES = 8
_results: OrderedDict[str, Any] = OrderedDict()
_lock = threading.Lock()


def upload(name: str, data: bytes) -> io.BytesIO:
    """Uploaded bytes with their file name, as the readers take them."""
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def signature(sources: list[Any]) -> tuple:
    """What identifies a request cheaply (the page reruns often): a path's name, size and
    modification time; an upload's name, size and Streamlit file id (else the hash of its bytes)."""
    parts = []
    for source in sources:
        if isinstance(source, Path):
            info = source.stat()
            parts.append((str(source), info.st_size, info.st_mtime_ns))
        elif getattr(source, "file_id", None):
            parts.append((source.name, getattr(source, "size", None), source.file_id))
        else:
            data = source.getvalue()
            parts.append((source.name, len(data), hashlib.sha256(data).hexdigest()))
    return tuple(parts)


def content_key(sources: list[Any], settings: tuple) -> str:
    """SHA-256 of every file's bytes, in order, and of the settings."""
    digest = hashlib.sha256(repr(settings).encode())
    for source in sources:
        if isinstance(source, Path):
            file_digest = hashlib.sha256()
            with open(source, "rb") as handle:
                while chunk := handle.read(1 << 22):
                    file_digest.update(chunk)
            digest.update(file_digest.digest())
        else:
            digest.update(hashlib.sha256(source.getvalue()).digest())
    return digest.hexdigest()


def start(runs: list[Any], qrels: Any, *, missing: str, precision: str = "float32") -> jobs.Job:
    """A background job scoring `runs` (paths or uploads) against `qrels`; its result is a
    `tempo_eval.trec_scores.TrecScores` with curves up to MAX_K."""

    def work(job: jobs.Job) -> Any:
        from tempo_eval.trec_scores import score_trec_files

        job.progress(0, 1000)
        key = content_key([*runs, qrels], (missing, precision, MAX_K))
        with _lock:
            cached = _results.get(key)
        if cached is not None:
            return cached
        scores = score_trec_files(
            runs, qrels, metrics=[f"ndcg@{MAX_K}"], missing=missing, precision=precision, curve_k=MAX_K,
            progress=lambda fraction: job.progress(int(fraction * 1000), 1000),
        )
        with _lock:
            _results[key] = scores
            while len(_results) > CACHE_ENTRIES:
                _results.popitem(last=False)
        return scores

    return jobs.start("compare run files", -1, work)


def per_query(scores: Any, k: int) -> dict[str, dict[str, dict[str, float]]]:
    """`tempo_eval.compare.compare`'s input at cutoff k from a result's curves."""
    out = {}
    for run, (query_ids, matrix) in scores.curves.items():
        out[run] = {f"ndcg@{k}": dict(zip(query_ids, matrix[:, k - 1].tolist(), strict=True))}
    return out


def curves_at(scores: Any, k: int) -> dict[str, dict[str, list[float]]]:
    """{run: {query_id: NDCG@1..k}} for the curve chart."""
    return {
        run: dict(zip(query_ids, matrix[:, :k].tolist(), strict=True))
        for run, (query_ids, matrix) in scores.curves.items()
    }
