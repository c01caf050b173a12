"""Shared set-up of the job tests (tests/jobs/): a generated dataset file, an upload in
the workspace's uploads/ folder, a job that has ended, a file made older."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tempo_eval.store.db import workspace_dir
from tempo_eval.store.jobs import JobQueue, Worker

ROOT = Path(__file__).resolve().parents[2]
#: the Evaluate page's settings for a focus-time faithfulness run (no model, no judge)
SETTINGS = {"tf": True, "tf_mode": "focus_time", "ndcg": False, "ndcg_mode": "gold", "fc": False, "k": 10,
            "verifier": "lexical", "nli_model": "", "judge_url": "", "judge_model": "", "run_name": "",
            "reference_date": None}


def write_rows(path: Path, n_rows: int, word: str = "bridge") -> Path:
    """A JSON Lines dataset whose every answer is its own text (no memo shortens a run)."""
    with path.open("w") as out:
        for i in range(n_rows):
            out.write(json.dumps({
                "query_id": f"q{i}", "query": f"What happened in {1900 + i % 120}?",
                "answer": f"In {1900 + i % 120} {word} {i} opened; it closed in {1950 + i % 60}.",
                "contexts": [f"The {word} {i} opened in {1900 + i % 120}.", f"It closed later ({i})."],
            }) + "\n")
    return path


def upload(name: str, rows: int = 50) -> Path:
    """A dataset file in the workspace's uploads/ folder, as a page saves one."""
    folder = workspace_dir() / "uploads"
    folder.mkdir(exist_ok=True)
    return write_rows(folder / name, rows)


def ended(queue: JobQueue, kind: str, arguments: dict[str, Any], status: str, **fields: Any) -> dict[str, Any]:
    """A job of `kind` queued, taken by this process and ended as `status` (with `fields`)."""
    session = fields.pop("session", None)  # the browser session that queued it (the Evaluate page's own)
    job_id = queue.submit(kind, arguments, dataset_id=fields.pop("dataset_id", None),
                          **({"session": session} if session is not None else {}))
    assert queue.claim(Worker.this_process(), limit=5, kinds=(kind,))["id"] == job_id
    queue.finish(job_id, status, **fields)
    return queue.get(job_id)


def age(path: Path, days: float) -> None:
    """Make `path` (itself, not what a link names) `days` days old."""
    when = time.time() - days * 86400
    os.utime(path, (when, when), follow_symlinks=False)
