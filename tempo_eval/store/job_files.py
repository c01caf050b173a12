"""The files the dashboard's jobs leave in the workspace, removed once nothing needs them.

`uploads/` holds what was uploaded on a page (`tempo_eval_app.worker_jobs.save_upload`), which a
worker reads; `cache/compare/` holds Compare's scored run files (`tempo_eval.compare.saved`).
The worker (`tempo_eval.cli.job`) calls `release` when a job has ended and `sweep` when it starts
one. What is removed:

- an upload, once the job that read it has ended (finished: its data is stored; failed or
  cancelled) and no queued or running job names it. Kept: the file of a read that only previewed
  it (`store` false: the page's "Use" button stores it next), of an interrupted evaluation
  (Resume reads it again), and Compare's run files (a new session reopens a comparison only
  while they are there). The page writes an upload again before it queues a new job reading it.
- any upload (also a `.part` left by a write that stopped) not changed for UPLOAD_DAYS days that
  no queued or running job names.
- a saved comparison last used (written, or found by a job) more than CACHE_DAYS days ago, and
  the least recently used ones while the folder holds more than CACHE_MAX_MB; never one used in
  the last IN_USE_S seconds (a page may be reading it) nor one a running job is writing
  (`KEY.part-PID`, removed only once that process has ended).

Only files inside the workspace's own folders are ever removed, never a path typed on a page:
a link (a file or folder there that links elsewhere) is neither removed nor followed, and an
uploads/ or cache/compare/ that is itself a link out of the workspace is never tidied.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tempo_eval.store.db import files_dir

logger = logging.getLogger("tempo_eval.job")

#: an upload no job needs is removed after this many days (TEMPO_EVAL_UPLOAD_DAYS)
UPLOAD_DAYS = 7.0
#: a saved comparison unused for this many days is removed (TEMPO_EVAL_CACHE_DAYS)
CACHE_DAYS = 30.0
#: the saved comparisons' size cap in MB, least recently used removed first (TEMPO_EVAL_CACHE_MAX_MB)
CACHE_MAX_MB = 2048.0
#: a comparison used this recently is never removed
IN_USE_S = 3600.0
#: kinds whose uploads are removed when they end (Compare's files stay for a new session)
RELEASING_KINDS = ("dataset_upload", "trec_runs", "foreign_import", "evaluate")


def setting(name: str, default: float) -> float:
    """A number of the environment (`name`), else `default`; a bad value says what was expected."""
    configured = os.environ.get(name, "").strip()
    if not configured:
        return default
    try:
        value = float(configured)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {configured!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be zero or more, got {configured!r}")
    return value


def uploads_dir() -> Path:
    return files_dir() / "uploads"


def _own_folder(folder: Path) -> Path | None:
    """`folder` resolved when it lies in the workspace itself, else None: a folder made a link
    to somewhere else (someone's own data) is never tidied."""
    resolved = folder.resolve()
    return resolved if resolved.is_relative_to(files_dir().resolve()) else None


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def upload_paths(arguments: dict[str, Any]) -> set[Path]:
    """The files of the workspace's uploads/ folder that a job's arguments name (a path typed on
    a page, anywhere else, is never one)."""
    folder = _own_folder(uploads_dir())
    found: set[Path] = set()
    if folder is None:
        return found
    for key in ("path", "runs", "qrels", "queries", "corpus", "doc_dates", "query_dates"):
        for text in _strings(arguments.get(key)):
            path = Path(text)
            if path.is_absolute() and not path.is_symlink() and path.resolve().parent == folder:
                found.add(path.resolve())
    return found


def missing_upload(arguments: dict[str, Any]) -> str | None:
    """Why a job cannot start, in the page's words: an upload it names is no longer in uploads/
    (removed after an earlier job, or by the sweep); None when every one is there."""
    for path in sorted(upload_paths(arguments)):
        if not path.exists():
            name = path.name.partition("_")[2] or path.name  # `save_upload` names it ID_NAME
            try:
                unused = f"after {setting('TEMPO_EVAL_UPLOAD_DAYS', UPLOAD_DAYS):g} days unused"
            except ValueError:  # a bad setting is the sweep's to report (in the log), not this job's
                unused = "when left unused for days"
            return (f"{name}: the uploaded file is no longer in the workspace (an upload is removed once "
                    f"the job that read it has ended, or {unused}); upload it again")
    return None


def _in_use(queue: Any, *, resumable: bool = False) -> set[Path]:
    """The uploads a queued or running job names; with `resumable`, also an interrupted
    evaluation (its Resume reads the file again, and the page does not write it again)."""
    jobs = queue.jobs(active=True, limit=100_000)
    if resumable:
        jobs += queue.jobs(kind="evaluate", status="interrupted", limit=100_000)
    return {path for job in jobs for path in upload_paths(job["arguments"])}


def release(queue: Any, job: dict[str, Any]) -> list[Path]:
    """Remove the uploads of a job that has ended (see the module docstring); returns them."""
    if job["kind"] not in RELEASING_KINDS or job["status"] not in ("finished", "failed", "cancelled"):
        return []
    if job["status"] == "finished" and job["kind"] in ("dataset_upload", "trec_runs") \
            and not job["arguments"].get("store"):
        return []  # only previewed: "Use" stores it from the same file
    removed = []
    for path in sorted(upload_paths(job["arguments"]) - _in_use(queue, resumable=True)):
        try:
            path.unlink()
            removed.append(path)
        except FileNotFoundError:
            pass
        except OSError:
            logger.warning("upload %s not removed", path, exc_info=True)
    return removed


def sweep(queue: Any, now: float | None = None) -> list[Path]:
    """Remove old uploads and saved comparisons (see the module docstring); returns them."""
    now = time.time() if now is None else now
    return _sweep_uploads(queue, now) + _sweep_comparisons(queue, now)


def _sweep_uploads(queue: Any, now: float) -> list[Path]:
    folder = _own_folder(uploads_dir())
    if folder is None or not folder.is_dir():
        return []
    cutoff = now - setting("TEMPO_EVAL_UPLOAD_DAYS", UPLOAD_DAYS) * 86400
    named = _in_use(queue)
    removed = []
    for path in folder.iterdir():
        try:
            # a link (to a file anywhere) is not an upload: save_upload writes plain files
            if not path.is_symlink() and path.is_file() and path.stat().st_mtime < cutoff \
                    and path.resolve() not in named:
                path.unlink()
                removed.append(path)
        except OSError:  # gone meanwhile, or not ours to remove: the next sweep looks again
            continue
    return removed


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _writer_alive(name: str) -> bool:
    """Whether the process writing `KEY.part-PID` is still running."""
    from tempo_eval.store.jobs import process_start

    pid = name.rpartition(".part-")[2]
    return pid.isdigit() and process_start(int(pid)) is not None


def _sweep_comparisons(queue: Any, now: float) -> list[Path]:
    from tempo_eval.store.db import comparisons_dir

    root = _own_folder(comparisons_dir())
    if root is None or not root.is_dir():
        return []
    last_job: dict[str, float] = {}
    for job in queue.jobs(kind="compare_runs", limit=100_000):
        key = (job["result"] or {}).get("key")
        if key:
            last_job[str(key)] = max(last_job.get(str(key), 0.0), job["finished_at"] or job["updated_at"] or 0.0)
    entries = []  # (last use, size, folder)
    removed = []
    for folder in root.iterdir():
        try:
            if folder.is_symlink() or not folder.is_dir():  # not a comparison this app wrote
                continue
            if ".part-" in folder.name:  # being written, or left by a worker that died
                if not _writer_alive(folder.name) and now - folder.stat().st_mtime > IN_USE_S:
                    shutil.rmtree(folder)
                    removed.append(folder)
                continue
            used = max(folder.stat().st_mtime, last_job.get(folder.name, 0.0))
            entries.append((used, _size(folder), folder))
        except OSError:
            continue
    max_age = setting("TEMPO_EVAL_CACHE_DAYS", CACHE_DAYS) * 86400
    budget = setting("TEMPO_EVAL_CACHE_MAX_MB", CACHE_MAX_MB) * 1e6
    total = sum(size for _, size, _ in entries)
    for used, size, folder in sorted(entries, key=lambda e: e[0]):  # least recently used first
        if now - used < IN_USE_S:
            break  # this one and every later one may be on a page now
        if now - used <= max_age and total <= budget:
            break
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
        total -= size
    return removed
