"""Sending metrics to Ray workers, and the verdict cache a worker sees.

The driver's metric objects are pickled once (`ship_metrics`) and rebuilt in every actor
(`unship_metrics`). What cannot or must not travel is replaced on the way:

- a `VerdictCache` (an open SQLite connection) becomes the actor's `WorkerVerdictCache`, which
  reads the workspace database read-only when the worker can open the same file (one machine, or
  a shared file system) and otherwise a snapshot of the cache shipped with the job; the verdicts
  it makes are collected and returned with each block, and the driver alone writes them
  (`VerdictCache.add_many`, INSERT OR IGNORE): no two writers, no duplicate keys;
- an NLI verifier travels without its loaded model (each actor loads it once, on first use) and
  with its device set for the actor (`worker_device`: "cuda" when the actor was given a GPU);
- locks are made anew.

The metrics' default verifiers (factual_correctness's lexical verifier, ...) are built in the
actor and get the same worker cache (`install_default_caches`).
"""

from __future__ import annotations

import atexit
import io
import json
import os
import pickle
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))


@dataclass(frozen=True)
class CacheSource:
    """Where a worker reads verdicts: the workspace database file, if it can open it, else the
    snapshot (an ObjectRef to {key: record}), if any."""

    db_path: str | None
    snapshot: Any = None


def worker_device(configured: str, gpu_ids: Sequence[Any]) -> str:
    """The torch device of an NLI verifier in an actor: "cuda" (the actor's own GPU: Ray limits
    CUDA_VISIBLE_DEVICES to it) when the actor was given a GPU and the verifier was left on the
    CPU default; otherwise the configured device."""
    return "cuda" if gpu_ids and configured == "cpu" else configured


class _ShipPickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, source: CacheSource, gpus: float) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.source = source
        self.gpus = gpus

    def reducer_override(self, obj: Any) -> Any:
        from tempo_eval.store.verdict_cache import VerdictCache

        if isinstance(obj, VerdictCache):
            return worker_cache, (self.source,)
        if isinstance(obj, _LOCK_TYPES):
            return _new_lock, (isinstance(obj, type(threading.RLock())),)
        if isinstance(obj, sqlite3.Connection):
            raise TypeError("an open database connection cannot be sent to a Ray worker")
        if type(obj).__name__ == "NLIVerifier" and type(obj).__module__ == "tempo_eval.verify.nli":
            state = {k: v for k, v in vars(obj).items() if k not in _NLI_LOADED}
            return _rebuild_nli, (type(obj), state, self.gpus > 0)
        return NotImplemented


_NLI_LOADED = frozenset({"_tokenizer", "_model", "_columns", "_model_max_length", "_load_error"})


def ship_metrics(metrics: Sequence[Any], source: CacheSource, *, gpus_per_worker: float = 0) -> bytes:
    """The metrics as bytes for `unship_metrics` in an actor. Raises ValueError naming the metric
    when one holds something that cannot travel (an open connection, a client socket, ...)."""
    for metric in metrics:
        buffer = io.BytesIO()
        try:
            _ShipPickler(buffer, source, gpus_per_worker).dump(metric)
        except Exception as exc:
            raise ValueError(
                f"{metric.name} cannot be sent to Ray workers ({type(exc).__name__}: {exc}); "
                "run it with the local engine"
            ) from None
    buffer = io.BytesIO()
    _ShipPickler(buffer, source, gpus_per_worker).dump(list(metrics))
    return buffer.getvalue()


def unship_metrics(payload: bytes) -> list[Any]:
    return pickle.loads(payload)


def _new_lock(reentrant: bool) -> Any:
    return threading.RLock() if reentrant else threading.Lock()


def _rebuild_nli(cls: type, state: dict[str, Any], on_gpu: bool) -> Any:
    verifier = cls.__new__(cls)
    vars(verifier).update(state)
    for name in _NLI_LOADED:
        setattr(verifier, name, None)
    if on_gpu:
        import ray

        verifier.device = worker_device(verifier.device, ray.get_gpu_ids())
    return verifier


# ---- the worker's verdict cache --------------------------------------------------------------

class WorkerVerdictCache:
    """The `VerdictCache` interface (get_many / put_many / len) inside an actor: reads from the
    workspace file (read-only) or the shipped snapshot, keeps what this actor adds, and hands the
    new verdicts to the driver (`drain`)."""

    def __init__(self, source: CacheSource) -> None:
        self.source = source
        self._known: dict[str, dict[str, Any]] = {}
        self._new: dict[str, dict[str, Any]] = {}
        self._conn: sqlite3.Connection | None = None
        self._snapshot: Mapping[str, Any] | None = None
        self._opened = False
        self._lock = threading.Lock()
        self._hits = 0  # keys looked up and found (in this actor, the file or the snapshot)
        self._misses = 0

    def _open(self) -> None:
        self._opened = True
        path = self.source.db_path
        if path and os.path.exists(path):
            # read-only: only the driver writes; WAL lets us read while it does
            self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        elif self.source.snapshot is not None:
            import ray

            self._snapshot = ray.get(self.source.snapshot)

    def get_many(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            if not self._opened:
                self._open()
            found = {k: self._known[k] for k in keys if k in self._known}
            missing = list(dict.fromkeys(k for k in keys if k not in found))
            if missing and self._conn is not None:
                for start in range(0, len(missing), 500):
                    chunk = missing[start:start + 500]
                    rows = self._conn.execute(
                        f"SELECT key, record FROM verdict_cache WHERE key IN ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
                    found.update((key, json.loads(record)) for key, record in rows)
            elif missing and self._snapshot is not None:
                found.update((k, self._snapshot[k]) for k in missing if k in self._snapshot)
            self._hits += len(found)
            self._misses += len(set(keys)) - len(found)
        return found

    def put_many(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        with self._lock:
            for key, record in records.items():
                self._known[key] = dict(record)
                self._new[key] = dict(record)

    def drain(self) -> tuple[dict[str, dict[str, Any]], int, int]:
        """The verdicts made since the last drain (for the driver to store), and how many keys
        were looked up and found (hits) or not (misses) since then."""
        with self._lock:
            new, self._new = self._new, {}
            hits, misses, self._hits, self._misses = self._hits, self._misses, 0, 0
        return new, hits, misses

    def __len__(self) -> int:
        return len(self._known)


_worker_caches: dict[CacheSource, WorkerVerdictCache] = {}
_caches_lock = threading.Lock()


def worker_cache(source: CacheSource) -> WorkerVerdictCache:
    """The process's one cache for `source` (every verifier in an actor shares it)."""
    with _caches_lock:
        return _worker_caches.setdefault(source, WorkerVerdictCache(source))


def install_default_caches(source: CacheSource, gpus_per_worker: float) -> None:
    """Point the metrics' default verifiers (built lazily per process, see
    `tempo_eval.verify.default_lexical_verifier`) at this actor's worker cache and device.

    The defaults are keyed by the workspace path; the actor's TEMPO_EVAL_HOME is a private empty
    directory (`actor_home`), so building them creates no file in the user's workspace."""
    from tempo_eval import verify

    os.environ["TEMPO_EVAL_HOME"] = actor_home()
    cache = worker_cache(source)
    for build in (verify.default_lexical_verifier, verify.default_nli_verifier):
        default = build()
        default.cache = cache
        inner = getattr(default, "verifier", None)
        if gpus_per_worker and hasattr(inner, "device"):
            import ray

            inner.device = worker_device(inner.device, ray.get_gpu_ids())


#: an actor's private workspace folder, in the temporary folder: this prefix, its process id, "-"
ACTOR_HOME_PREFIX = "tempo-eval-actor-"
#: (process id, folder) of this process's folder, once made
_actor_home: tuple[int, str] | None = None


def actor_home() -> str:
    """This process's private, empty workspace folder, one however many actors the process hosts,
    removed when the process exits. A process killed first (Ray may end its workers so) leaves its
    folder behind: the folders of processes no longer running are removed when a new one is made."""
    global _actor_home
    pid = os.getpid()
    if _actor_home is None or _actor_home[0] != pid or not os.path.isdir(_actor_home[1]):
        _remove_orphaned_homes()
        folder = tempfile.mkdtemp(prefix=f"{ACTOR_HOME_PREFIX}{pid}-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _actor_home = (pid, folder)
    return _actor_home[1]


def _remove_orphaned_homes() -> None:
    """Remove the actor folders (`actor_home`) of processes that are no longer running."""
    parent = tempfile.gettempdir()
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid_text, sep, _ = name[len(ACTOR_HOME_PREFIX):].partition("-")
        if not name.startswith(ACTOR_HOME_PREFIX) or not sep or not pid_text.isdigit():
            continue
        try:
            os.kill(int(pid_text), 0)
        except ProcessLookupError:  # gone: its folder is an orphan
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
        except (PermissionError, OverflowError):  # running, as another user (or not a process id)
            continue
