"""TREC run files named on the Compare page (paths, folders, uploads), scored by a worker process.

The page never reads the runs itself: it queues a `compare_runs` job in the workspace
(`tempo_eval.store.jobs`, through `tempo_eval_app.worker_jobs`) with the files' paths (uploads
are first saved to the workspace's uploads/ folder, as data) and the settings, and starts a
worker (`python -m tempo_eval job run`). The worker writes the per-query values to a folder of
the workspace keyed by the SHA-256 of the files and settings (`tempo_eval.compare.saved`);
the page reads that folder. A job is found again by its arguments (paths, each file's size and
modification time, settings), so a rerun, a reload (the job id is in the address), another
browser session or another app process shows the same comparison without scoring again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from tempo_eval.compare import saved as saved_comparisons
from tempo_eval_app import permissions, worker_jobs
from tempo_eval_app.identity import current_user

KIND = "compare_runs"
#: the largest k the page offers: every saved comparison holds NDCG up to it
MAX_K = saved_comparisons.MAX_K


def saved(source: Any) -> Path:
    """A path as it is; an upload written to the workspace's uploads/ folder (once)."""
    return source if isinstance(source, Path) else worker_jobs.save_upload(source, action="compare_files")


def _stamp(path: Path) -> list[int]:
    info = path.stat()
    return [info.st_size, info.st_mtime_ns]


def arguments(runs: list[Path], qrels: Path, *, doc_dates: Path | None = None, query_dates: Path | None = None,
              missing: str = "zero", k: int = 10, max_age: float = 365, half_life: float = 365,
              precision: str = "float32") -> dict[str, Any]:
    """The job's arguments: the paths, each file's size and modification time (an edited file
    is a new job), and the settings that decide the result (k, max_age and half_life only with
    both date files: without them every k is a slice of the saved curves)."""
    files = [*runs, qrels]
    out: dict[str, Any] = {"runs": [str(p) for p in runs], "qrels": str(qrels), "missing": missing,
                           "precision": precision}
    if doc_dates is not None and query_dates is not None:
        files += [doc_dates, query_dates]
        out.update(doc_dates=str(doc_dates), query_dates=str(query_dates), k=int(k), max_age=float(max_age),
                   half_life=float(half_life))
    out["stamps"] = [_stamp(p) for p in files]
    return out


def request(args: dict[str, Any], *, again: bool = False) -> dict[str, Any]:
    """The job for these arguments: the newest one asked before (running, queued, finished with
    its folder still there, or failed: a bad file fails the same way again), else a new one,
    with a worker started for it. `again` queues a new one whatever was found."""
    queue = worker_jobs.queue()
    found = queue.latest(KIND, args)
    if found is not None and not again:
        found = worker_jobs.job(found["id"])
        usable = found["active"] or found["status"] == "failed" or (
            found["status"] == "finished" and saved_comparisons.is_saved(str((found["result"] or {}).get("key"))))
        if usable:
            return found
    permissions.require("compare_files")
    job_id = queue.submit(KIND, args, label="compare run files", user=current_user())
    worker_jobs.spawn_worker()
    return worker_jobs.job(job_id)


def stored(job: dict[str, Any]) -> saved_comparisons.StoredComparison | None:
    """The saved comparison a finished job wrote (None when its folder is gone)."""
    key = (job.get("result") or {}).get("key")
    return load(str(key)) if key and saved_comparisons.is_saved(str(key)) else None


@st.cache_resource(show_spinner="Reading the saved comparison…", max_entries=8)
def load(key: str) -> saved_comparisons.StoredComparison:
    """The saved comparison `key` (`saved_comparisons.is_saved(key)`), read once per app process."""
    found = saved_comparisons.load(key)
    if found is None:
        raise FileNotFoundError(f"no saved comparison {key!r} in this workspace")
    return found


def reopened(job_id: int | None) -> dict[str, Any] | None:
    """The arguments of job `job_id` (from the address) or, without one, of the newest run-file
    comparison of the workspace, when all its files are still there: what a new session shows."""
    queue = worker_jobs.queue()
    found = queue.get(int(job_id)) if job_id is not None else None
    if found is None:
        newest = queue.jobs(kind=KIND, limit=1)
        found = newest[0] if newest else None
    if found is None or found["kind"] != KIND:
        return None
    args = found["arguments"]
    paths = [*args.get("runs", []), args.get("qrels"), args.get("doc_dates"), args.get("query_dates")]
    if not all(Path(p).is_file() for p in paths if p):
        return None
    return {**args, "job": found["id"]}


def error_text(job: dict[str, Any], names: dict[str, str]) -> str:
    """The job's error in the page's words: the reader's message (file, line, value) without the
    exception's name, uploads called by their names rather than their saved paths."""
    message = job.get("error") or "the run files could not be read"
    head, sep, rest = message.partition(": ")
    if sep and head.isidentifier():
        message = rest
    for path, name in names.items():
        message = message.replace(path, name)
    return message


def progress_text(job: dict[str, Any]) -> str:
    """'Scoring the run files in a worker… 40%', or its place in the queue."""
    if job["status"] == "queued":
        place = worker_jobs.queue().place(job["id"])
        return "Waiting for a free worker" + (f" (place {place} in the queue)" if place else "") + "…"
    fraction = job["done"] / job["total"] if job["total"] else 0.0
    return f"Scoring the run files in a worker… {fraction:.0%}"
