"""Long work started from a page and run by a worker process, out of the app's process.

The page queues a job in the workspace (`tempo_eval.store.jobs`) and starts
`python -m tempo_eval job run` detached (its own session, so neither a rerun, a closed tab nor
a restart of the app stops it); from then on the page only reads the job's row: status, rows
done, rows per second, its place in the queue, the error, the run it wrote. Cancel is a flag on
the row that the worker reads. Because everything is in the workspace, the job outlives the app
process, and every app process on the same workspace shows it.

What runs here: evaluations (Evaluate), the NLI model check (Evaluate's verifier list), so the
app process never imports torch or transformers, Compare's run files (`compare_files.py`), and
reading what was uploaded on a page (`tempo_eval.jobs.uploads`: a dataset file or TREC runs
on Datasets, foreign scores on Agreement): the page saves the bytes to the workspace, queues the
job (`page_job`), waits for it a moment (`PAGE_WAIT_S`, enough for a small file) and otherwise
shows it waiting or reading (`show_pending`) until it ends.

An evaluation belongs to the browser session that queued it (`session_id`, kept in the job's
row): only that session shows it as its own, with Cancel, and waits for it before running
another; other sessions see that it runs in the workspace (`others_evaluating`) and may start
their own. An interrupted evaluation (its worker died) is listed to every session of the
workspace with Resume (`interrupted_evaluations`): its row holds all a worker needs, and the
session that resumes it owns it from then on.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import streamlit as st

from tempo_eval.cli.job import KEY_ENV, PLACEHOLDER
from tempo_eval.store.db import database_location, files_dir, workspace_dir
from tempo_eval.store.jobs import PAGE_LIMIT, JobQueue, default_limit
from tempo_eval_app.formatting import md_escape
from tempo_eval_app.identity import current_user
from tempo_eval_app.permissions import blocked, explain, require

ROOT = Path(__file__).resolve().parents[1]
CHECKING = "Checking whether the model loads here…"
#: a model found missing is checked again after this many seconds (it may have been installed since)
RECHECK_AFTER = 600.0


@st.cache_resource(show_spinner=False)
def _queue_for(db_path: str) -> JobQueue:
    return JobQueue(db_path)


def queue() -> JobQueue:
    """The job queue of the current workspace (one connection per process and workspace)."""
    return _queue_for(database_location())


def spawn_worker(*, key_for: int | None = None, api_key: str | None = None) -> None:
    """Start a worker process for the workspace's queue, detached from this one. With `key_for`,
    the worker alone gets `api_key` (in its environment, never in the database) for that job."""
    env = {key: value for key, value in os.environ.items() if key != KEY_ENV}
    command = [sys.executable, "-m", "tempo_eval", "job", "run", "--workspace", str(workspace_dir()),
               "--limit", str(default_limit())]
    if key_for is not None and api_key:
        env[KEY_ENV] = api_key
        command += ["--key-for", str(key_for)]
    logs = files_dir() / "logs"
    logs.mkdir(exist_ok=True)
    with (logs / "workers.log").open("ab") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    # collect its exit status, so an ended worker leaves no zombie that would look alive
    threading.Thread(target=process.wait, name="worker-reaper", daemon=True).start()


#: the cookie a browser keeps for the app (Streamlit's XSRF token, set once per browser)
_BROWSER_COOKIE = "_streamlit_xsrf"


def session_id() -> str:
    """The opaque id of this browser session, the owner of the jobs it queues: a digest of the
    browser's XSRF cookie (a reload or another tab of the same browser keeps it; another browser
    has its own), else a random id kept in this tab's session state (no cookie: a reload is
    then a new session)."""
    token = _cookie_token()
    if token:
        return hashlib.sha256(b"tempo-eval session " + token).hexdigest()[:32]
    if "_session_id" not in st.session_state:
        st.session_state["_session_id"] = os.urandom(16).hex()
    return str(st.session_state["_session_id"])


def _cookie_token() -> bytes | None:
    """The secret part of the XSRF cookie (tornado's version 2 is `2|mask|masked token|time`: the
    mask changes when the cookie is written again, the token does not), or the cookie as it is."""
    try:
        cookie = st.context.cookies.get(_BROWSER_COOKIE)
    except (AttributeError, RuntimeError):  # no browser (a script run without a session)
        return None
    if not isinstance(cookie, str) or not cookie:
        return None
    parts = cookie.split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
            return bytes(byte ^ mask[i % len(mask)] for i, byte in enumerate(masked)) if mask else masked
        except ValueError:
            pass
    return cookie.encode()


def start_evaluation(settings: dict[str, Any], dataset_id: int | None, label: str, api_key: str | None,
                     *, path: Path | None = None) -> int:
    """Queue an evaluation of a stored dataset (or of the file `path`, already confined to the
    allowed folders) and start a worker; returns the job id.
    `api_key` is the judge's key as `verifier_choice.judge_api_key` gave it (None: the worker reads
    the server's OPENAI_API_KEY; the placeholder is stored as such; a typed key is never stored)."""
    from tempo_eval.llm.provider import PLACEHOLDER_API_KEY

    require("evaluate")
    arguments = {**settings, "dataset_id": None if dataset_id is None else int(dataset_id)}
    if path is not None:
        arguments["path"] = str(path)
        dataset_id = None
    arguments.pop("api_key", None)
    typed = api_key if api_key and api_key != PLACEHOLDER_API_KEY else None
    if api_key == PLACEHOLDER_API_KEY:
        arguments["api_key_source"] = PLACEHOLDER
    job_id = queue().submit("evaluate", arguments, label=label, dataset_id=dataset_id,
                            needs_key=typed is not None, session=session_id(), user=current_user())
    spawn_worker(key_for=job_id if typed else None, api_key=typed)
    return job_id


def storing() -> list[dict[str, Any]]:
    """The jobs storing a dataset now: a dataset upload being stored, an evaluation of a file
    (it stores the file's rows as it reads them); the rows so far are the job's progress."""
    active = [*queue().jobs(kind="dataset_upload", active=True), *queue().jobs(kind="evaluate", active=True)]
    return [j for j in active if j["status"] == "running"
            and (j["arguments"].get("store") if j["kind"] == "dataset_upload" else j["arguments"].get("path"))]


def partial_label(jobs: list[dict[str, Any]]) -> str:
    """What a dataset whose rows are not all stored (its row count is set once they are) is shown
    as, given the `storing` jobs: "storing…" with the rows so far (when one job stores, its
    progress is that dataset's), or "incomplete" when no job stores any more."""
    if not jobs:
        return "incomplete: the job storing it stopped (reading the file again completes it)"
    return "storing…" + (f" ({jobs[0]['done']:,} rows so far)" if len(jobs) == 1 and jobs[0]["done"] else "")


#: how long a page waits for an upload's job before it shows the job reading instead (s);
#: TEMPO_EVAL_PAGE_WAIT_S sets another (the tests wait until the job ends)
PAGE_WAIT_S = 3.0


def page_job(kind: str, arguments: dict[str, Any], label: str, *, again: bool = False,
             ensure: Any = None) -> dict[str, Any]:
    """The job of `kind` with exactly these arguments: the newest one (a rerun, a reload or another
    session finds it, a cancelled one too: the page offers to read it again; one that was
    interrupted is queued anew), or with `again` always a new one; a new job starts a worker.
    `ensure` (no argument) is called before a new job is queued: it writes the uploaded files the
    job reads again when they were removed (`save_upload`). Waits up to
    PAGE_WAIT_S for the job to end. Only a role that may upload queues one (or finds one)."""
    require("upload")
    found = None if again else queue().latest(kind, arguments)
    if found is not None and found["status"] == "running":
        found = job(found["id"])
    if found is None or found["status"] == "interrupted":
        if ensure is not None:
            ensure()
        found = queue().get(queue().submit(kind, arguments, label=label, user=current_user()))
        spawn_worker()
    return wait(found)


def wait(found: dict[str, Any], seconds: float | None = None) -> dict[str, Any]:
    """The job once it has ended, or as it is after `seconds` (default PAGE_WAIT_S)."""
    if seconds is None:
        seconds = float(os.environ.get("TEMPO_EVAL_PAGE_WAIT_S") or PAGE_WAIT_S)
    deadline = time.monotonic() + seconds
    while found["active"] and time.monotonic() < deadline:
        time.sleep(0.1)
        found = job(found["id"]) or found
    return found


def show_pending(found: dict[str, Any]) -> None:
    """An active job's state (its place among the uploads waiting, or rows read so far) with a
    Cancel button, and a watch that reruns the page once a second until the job has ended."""
    job_id = found["id"]

    @st.fragment(run_every=1.0)
    def watch() -> None:
        current = job(job_id) or found
        if not current["active"]:
            st.rerun()
        if current["status"] == "queued":
            place = queue().place(job_id)
            st.info(md_escape(f"{current['label']}: waiting behind other uploads, place {place or '…'} "
                              f"(uploads and Compare's scoring run {PAGE_LIMIT} at a time, beside the "
                              "evaluations)."),
                    icon=":material/hourglass_top:")
        elif current["cancel_requested"]:
            st.info(md_escape(f"{current['label']}: cancelling; what was stored of it is removed."),
                    icon=":material/hourglass_top:")
        else:
            rows = f", {current['done']:,} rows so far" if current["done"] else ""
            st.info(md_escape(f"{current['label']}: a worker is reading it ({elapsed(current):.0f} s{rows})."),
                    icon=":material/hourglass_top:")
        if not current["cancel_requested"] and cancel_button(job_id, f"cancel_upload_{job_id}",
                                                            icon=":material/stop_circle:"):
            st.rerun(scope="fragment")

    watch()


def save_uploads(uploads: list[Any], *, action: str = "upload") -> list[list[str]]:
    """Several uploads saved as `save_upload` does: [[file name, saved path], ...]."""
    return [[upload.name, str(save_upload(upload, action=action))] for upload in uploads]


def resume(job: dict[str, Any], api_key: str | None) -> bool:
    """Queue an ended job again and start a worker; False when it was active already. This
    session owns it from then on (it may be another than the one that queued it: a reload)."""
    require("evaluate")
    if not queue().requeue(job["id"], session=session_id()):
        return False
    needs = bool(job.get("needs_key")) and bool(api_key)
    spawn_worker(key_for=job["id"] if needs else None, api_key=api_key if needs else None)
    return True


#: a queued job whose lane has had a free place this long gets a worker of its own (s)
ORPHAN_AFTER_S = 10.0
_orphans_started: dict[int, float] = {}


def job(job_id: int | None) -> dict[str, Any] | None:
    """A job as stored now; a running job whose worker has died is marked interrupted first (one
    of the pages lane running past its time limit, or a keyed one whose worker died, failed). A
    queued one that no worker will take (the worker holding its lane died, or the one started
    for it did not start) gets a new worker, at most once per ORPHAN_AFTER_S."""
    if job_id is None:
        return None
    found = queue().get(int(job_id))
    if found is not None and (found["status"] == "running" or (found["status"] == "queued" and found["needs_key"])):
        queue().reap()  # a dead or hung worker's job, or a keyed one whose worker died before taking it
        found = queue().get(int(job_id))
    if found is not None and found["status"] == "queued" and not found["needs_key"]:
        _start_for_orphan(found)
    return found


def _start_for_orphan(found: dict[str, Any]) -> None:
    now = time.time()
    if now - max(found["updated_at"] or 0.0, _orphans_started.get(found["id"], 0.0)) < ORPHAN_AFTER_S:
        return
    queue().reap()  # a dead worker's job frees its place
    if queue().has_place(found["kind"], default_limit()):
        _orphans_started[found["id"]] = now
        spawn_worker()


def latest_evaluation(dataset_id: int) -> dict[str, Any] | None:
    """This session's newest evaluation job of a dataset (active or not), or of a file it is still
    evaluating (its dataset id is known once the worker has stored it); another session's jobs
    are `others_evaluating`."""
    mine = session_id()
    found = [j for j in queue().jobs(kind="evaluate", dataset_id=dataset_id, limit=20) if j["session"] == mine][:1]
    found += [j for j in queue().jobs(kind="evaluate", active=True, limit=20)
              if j["dataset_id"] is None and j["session"] == mine]
    return job(max(j["id"] for j in found)) if found else None


def others_evaluating() -> list[dict[str, Any]]:
    """The evaluations queued or running in the workspace that this session did not queue
    (another browser, the command line): shown, never cancelled from here."""
    mine = session_id()
    return [j for j in queue().jobs(kind="evaluate", active=True, limit=20) if j["session"] != mine]


def interrupted_evaluations(limit: int = 5) -> list[dict[str, Any]]:
    """The newest evaluations of the workspace whose worker died before they ended (any session's:
    after a reload, the page lists them with Resume); a running one whose worker is gone is
    marked interrupted first."""
    queue().reap()
    return queue().jobs(kind="evaluate", status="interrupted", limit=limit)


def save_upload(upload: Any, *, rewrite: bool = True, action: str = "upload") -> Path:
    """An uploaded file written to the workspace's uploads/ folder (once per upload), so a worker
    reads it from disk; returns its path. A worker removes the file once the job that read it has
    ended (`tempo_eval.store.job_files`): it is written again, while the upload box still holds
    it, unless `rewrite` is false and this session wrote it before (a page that saves on every
    rerun, and rewrites only when it queues a new job, `page_job(ensure=...)`). Only a role that
    may do `action` (upload; compare_files for Compare's run files) writes anything."""
    require(action)
    folder = files_dir() / "uploads"
    folder.mkdir(exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(upload.name).name)[-120:] or "dataset"
    path = folder / f"{re.sub(r'[^A-Za-z0-9]+', '', str(upload.file_id))[:40]}_{name}"
    written = st.session_state.setdefault("_uploads_written", set())
    if not path.exists() and (rewrite or str(path) not in written):
        partial = path.with_name(path.name + ".part")
        upload.seek(0)
        with partial.open("wb") as out:
            shutil.copyfileobj(upload, out, 1 << 20)
        partial.replace(path)
    written.add(str(path))
    return path


def nli_status(model: str) -> tuple[bool | None, str]:
    """What the last check of the NLI checkpoint `model` found: (True/False, sentence), or
    (None, CHECKING) while a worker checks it; a check is queued when none was made, the last one
    was interrupted, or it found the model missing more than RECHECK_AFTER seconds ago."""
    arguments = {"model": model}
    last = queue().latest("nli_check", arguments)
    if last is not None and last["active"]:
        last = job(last["id"])
    stale = (last is not None and last["status"] == "finished" and not (last["result"] or {}).get("ok")
             and time.time() - (last["finished_at"] or 0) > RECHECK_AFTER)
    if last is None or stale or last["status"] in ("interrupted", "cancelled"):
        queue().submit("nli_check", arguments, label=f"NLI check {model}", user=current_user())
        spawn_worker()
        return None, CHECKING
    if last["active"]:
        return None, CHECKING
    if last["status"] == "failed" or not last["result"]:
        return False, f"The check failed: {last['error'] or 'no answer'}"
    return bool(last["result"]["ok"]), str(last["result"]["message"])


def duration(seconds: float | None) -> str:
    """'about 2 h 05 min', 'about 3 min', 'under a minute'; '' when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:
        return ""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60:02d} min"


def progress_line(found: dict[str, Any]) -> str:
    """'LABEL: 1,200 of 40,000 rows · 35.2 rows/s · about 19 min left'."""
    done, total, rate = found["done"], found["total"], found["rows_per_s"]
    line = f"{found['label']}: {done:,} of {f'{total:,}' if total else '…'} rows"
    if rate:
        line += f" · {rate:,.1f} rows/s"
        left = duration((total - done) / rate) if total else ""
        if left:
            line += f" · {left} left"
    return line


def show_active(found: dict[str, Any]) -> bool:
    """A queued job's place in the queue, or a running one's progress bar, each with a Cancel
    button (the Evaluate and Conversation pages' evaluations); False, drawing nothing, once the
    job has ended."""
    if found["status"] == "queued":
        place = queue().place(found["id"])
        st.info(md_escape(f"{found['label']}: waiting in the queue, place {place or '…'} "
                          f"({default_limit()} evaluation(s) run at once on this machine)."),
                icon=":material/hourglass_top:")
        explain(blocked("manage_jobs"))
    elif found["status"] == "running":
        fraction = found["done"] / found["total"] if found["total"] else 0.0
        st.progress(min(1.0, fraction), text=md_escape(progress_line(found)))
    else:
        return False
    if cancel_button(found["id"], f"cancel_{found['id']}", icon=":material/stop_circle:"):
        st.toast("Cancelling: rows in flight finish and are stored.")
    return True


def cancel_button(job_id: int, key: str, **options: Any) -> bool:
    """A Cancel button for the job (disabled, with the reason, for a role that may not manage
    jobs); True when clicked: the cancel is then asked of the job, which its worker reads."""
    refused = blocked("manage_jobs")
    if not st.button("Cancel", key=key, disabled=bool(refused), help=md_escape(refused) if refused else None,
                     **options):
        return False
    require("manage_jobs")
    queue().request_cancel(job_id)
    return True


def elapsed(found: dict[str, Any]) -> float:
    end = found.get("finished_at") or time.time()
    return max(0.0, end - (found.get("started_at") or end))
