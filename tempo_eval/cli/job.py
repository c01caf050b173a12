"""`python -m tempo_eval job run`: the worker process that runs the dashboard's jobs.

Not listed in `--help`: the dashboard starts it (detached, in its own session) after queueing a
job in the workspace (`tempo_eval.store.jobs`). The worker takes queued jobs while fewer than
`--limit` run, and after each one, in the same transaction that records how it ended, takes the
next, so a queued job never waits with a free slot (lanes: `tempo_eval.store.jobs`). When a job
ends, the uploads it read are removed once nothing needs them, and old uploads and saved
comparisons when it starts one (`tempo_eval.store.job_files`). It writes progress twice a second and reads
the job's cancel request at the same time; a cancel sets the runner's cancel event (rows in
flight finish and are stored). It exits when nothing it may run is queued.

An API key typed on the page never reaches the database: the worker started for that job gets
it in its environment (`TEMPO_EVAL_JOB_KEY`, with `--key-for JOB`), and only that worker may
take the job.

Kinds: `evaluate` (the Evaluate page's settings, see `evaluation_metrics`, with the stored
`dataset_id` or a file's `path`), `compare_runs` (the Compare page's run files, see
`tempo_eval.compare.saved.compute`), `nli_check`
(whether an NLI checkpoint loads here; the page shows what the last check found, so the app
process never loads torch), and the uploads read for a page (`PAGE_KINDS`: `dataset_upload`,
`trec_runs`, `foreign_import`, see `tempo_eval.jobs.uploads`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from tempo_eval.store import job_files
from tempo_eval.store.jobs import READ_KINDS, JobQueue, Worker, default_limit

logger = logging.getLogger("tempo_eval.job")
KEY_ENV = "TEMPO_EVAL_JOB_KEY"
#: the setting of the workers' CPU priority (`job_nice`)
NICE_ENV = "TEMPO_EVAL_JOB_NICE"
#: pages first: measured at 20 sessions with a page-started job on 2 cores, nice 10 kept the job at
#: 108% of its speed alone and pages at 0.53x / 0.16x (p50 / p95) of their time without it; nice 0
#: gave 107% and 0.90x / 1.40x (README, "Evaluations beside the dashboard")
DEFAULT_NICE = 10
#: the judge's key when the page typed none but gave an endpoint: never the server's own key
PLACEHOLDER = "placeholder"


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tempo_eval job", allow_abbrev=False)
    commands = parser.add_subparsers(dest="action", required=True)
    run = commands.add_parser("run", help="run queued jobs of the workspace, then exit", allow_abbrev=False)
    run.add_argument("--workspace", metavar="DIR", help="workspace directory (default $TEMPO_EVAL_HOME)")
    run.add_argument("--limit", type=int, default=None, help="jobs running at once (default TEMPO_EVAL_MAX_JOBS "
                     "or the number of cores minus one)")
    run.add_argument("--key-for", type=int, default=None, metavar="JOB",
                     help=f"the job whose API key is in ${KEY_ENV}")
    run.add_argument("--nice", type=int, default=None, metavar="N",
                     help=f"run at this much lower CPU priority (default ${NICE_ENV} or {DEFAULT_NICE})")
    args = parser.parse_args(argv)
    logging.getLogger("tempo_eval").setLevel(logging.INFO)  # the worker's log: jobs started and ended
    lower_priority(job_nice() if args.nice is None else args.nice)
    if args.workspace:
        os.environ["TEMPO_EVAL_HOME"] = args.workspace
    keys: dict[int, str] = {}
    if args.key_for is not None and os.environ.get(KEY_ENV):
        from tempo_eval.common.secrets import register_secret

        keys[args.key_for] = os.environ.pop(KEY_ENV)
        register_secret(keys[args.key_for])
    queue = JobQueue()
    if keys:  # this worker alone may take that job: if it dies first, the job fails (not queued for ever)
        queue.hold(args.key_for, Worker.this_process())
    try:
        return run_worker(queue, limit=args.limit or default_limit(), keys=keys)
    finally:
        queue.close()


def job_nice() -> int:
    """The CPU priority the dashboard's workers give up (a nice value, 0 to 19): $TEMPO_EVAL_JOB_NICE,
    default `DEFAULT_NICE` (see "Evaluations beside the dashboard" in the README)."""
    value = os.environ.get(NICE_ENV, "").strip()
    try:
        return min(19, max(0, int(value))) if value else DEFAULT_NICE
    except ValueError:
        raise SystemExit(f"{NICE_ENV} must be a whole number from 0 to 19, got {value!r}") from None


def lower_priority(nice: int) -> None:
    """Lower this process's CPU priority by `nice`: its own nice value and, on Linux with scheduler
    autogroups, its session's group's. The worker runs in a session of its own, and the kernel
    shares the CPUs between sessions as equals whatever the nice of the processes inside, so
    only the group's nice ranks it below the dashboard's server (its own session too)."""
    if nice <= 0:
        return
    os.nice(nice)
    try:
        with open("/proc/self/autogroup", "w", encoding="ascii") as group:
            group.write(str(nice))
    except OSError:  # no autogroups here (another OS, or turned off): the process nice is what counts
        pass


def run_worker(queue: JobQueue, *, limit: int, keys: dict[int, str] | None = None,
               poll: float = 1.0) -> int:
    """Take and run jobs until none this worker may run is queued; returns 0."""
    keys = dict(keys or {})
    worker = Worker.this_process()
    finished: dict[str, Any] | None = None
    while True:
        job = queue.claim(worker, limit=limit, finished=finished, keys=frozenset(keys))
        if finished is not None:
            _tidy(job_files.release, queue, queue.get(finished["id"]))
        finished = None
        if job is not None:
            _tidy(job_files.sweep, queue)
        if job is None:
            waiting = [k for k in keys if (queue.get(k) or {}).get("status") == "queued"]
            if not waiting:
                return 0
            time.sleep(poll)  # our own job, with its key, waits for a free slot
            continue
        finished = run_job(queue, job, keys.pop(job["id"], None))


def _tidy(action: Any, queue: JobQueue, *args: Any) -> None:
    """Remove files no job needs (`tempo_eval.store.job_files`); a failure there is logged, never
    the job's."""
    try:
        for path in action(queue, *args):
            logger.info("removed %s", path)
    except Exception:
        logger.warning("workspace files not tidied", exc_info=True)


def run_job(queue: JobQueue, job: dict[str, Any], api_key: str | None) -> dict[str, Any]:
    """Run one claimed job; returns how it ended ({id, status, error?, run_id?, result?}). Every
    file the job opens by path is confined again where it is opened (`tempo_eval.common.confine`): the
    page checked the path when it was typed, the file may have been swapped since."""
    from tempo_eval.common.confine import allowed_roots, reads_confined_to

    logger.info("job %d (%s) started", job["id"], job["kind"])
    with reads_confined_to(allowed_roots()):
        return _run_job(queue, job, api_key)


def _run_job(queue: JobQueue, job: dict[str, Any], api_key: str | None) -> dict[str, Any]:
    try:
        missing = job_files.missing_upload(job["arguments"])
        if missing is not None:  # said in the page's words, not as the reader's missing path
            return {"id": job["id"], "status": "failed", "error": missing}
        if job["kind"] == "nli_check":
            return {"id": job["id"], "status": "finished", "result": nli_check(job["arguments"]["model"])}
        if job["kind"] == "evaluate":
            with _Watch(queue, job["id"]) as watch:
                result = run_evaluation(job["arguments"], api_key, watch.progress, watch.cancel,
                                        user=job.get("created_by"))
            status = result.status if result.status in ("finished", "cancelled", "failed") else "finished"
            return {"id": job["id"], "status": status, "run_id": result.run_id, "dataset_id": result.dataset_id}
        if job["kind"] == "compare_runs":  # run files of the Compare page, saved in the workspace
            from tempo_eval.compare.saved import compute

            with _Watch(queue, job["id"]) as watch:
                result = compute(job["arguments"], lambda f: watch.progress(round(f * 1000), 1000), watch.cancel)
            return {"id": job["id"], "status": "cancelled" if result is None else "finished", "result": result}
        if job["kind"] in PAGE_KINDS:  # rows read as progress; cancel seen between batches
            from tempo_eval.jobs.uploads import HANDLERS

            with _Watch(queue, job["id"]) as watch:
                ended = HANDLERS[job["kind"]](job["arguments"], watch.progress, watch.cancel,
                                              user=job.get("created_by"))
            return {"id": job["id"], **ended}
        raise ValueError(f"unknown job kind {job['kind']!r}")
    except Exception as exc:  # the job fails with a one-line error; the traceback goes to the log
        logger.exception("job %d failed", job["id"])
        first = str(exc).splitlines()[0] if str(exc) else ""
        return {"id": job["id"], "status": "failed", "error": f"{type(exc).__name__}: {first}"}
    finally:
        logger.info("job %d ended", job["id"])


#: kinds that read what was uploaded on a page; their handlers are the engine's
#: (`tempo_eval.jobs.uploads`), imported only when such a job runs
PAGE_KINDS = READ_KINDS


def nli_check(model: str) -> dict[str, Any]:
    """Whether the NLI checkpoint `model` loads here: {ok, message}."""
    from tempo_eval.verify.nli import NLIVerifier

    ok, message = NLIVerifier(model=model).check_available()
    return {"ok": bool(ok), "message": message}


class _Watch:
    """Writes a running job's progress twice a second and turns its cancel request into the
    runner's cancel event."""

    def __init__(self, queue: JobQueue, job_id: int, every: float = 0.5) -> None:
        self.queue, self.job_id, self.every = queue, job_id, every
        self.cancel = threading.Event()
        self._done = self._total = 0
        self._first: tuple[int, float] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"job-{job_id}-watch", daemon=True)

    def progress(self, done: int, total: int) -> None:
        """The runner's progress callback (rows done of total)."""
        if self._first is None:
            self._first = (done, time.monotonic())  # resumed rows count as done: the rate starts here
        self._done, self._total = done, total

    def rate(self) -> float | None:
        if self._first is None:
            return None
        rows, elapsed = self._done - self._first[0], time.monotonic() - self._first[1]
        return rows / elapsed if rows > 0 and elapsed > 0 else None

    def write(self) -> None:
        if self.queue.progress(self.job_id, self._done, self._total, self.rate()):
            self.cancel.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.write()
            except Exception:  # a busy database now and then: the next beat writes again
                logger.warning("job %d: progress not written", self.job_id, exc_info=True)

    def __enter__(self) -> _Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        self.write()


def evaluation_metrics(settings: dict[str, Any], api_key: str | None) -> tuple[list[Any], list[Any]]:
    """The metrics the Evaluate page's settings name, and the judges (providers) whose token use
    goes with the run. Settings: tf, tf_mode, ndcg, ndcg_mode, fc, k, verifier, nli_model,
    judge_url, judge_model, api_key_source ("placeholder" for an endpoint without a key); turn,
    window_size, turn_threshold, turn_penalize (Turn Faithfulness: Evaluate and Conversation)."""
    from tempo_eval.metrics.catalog import build_metric
    from tempo_eval.verify import make_verifier

    if settings.get("api_key_source") == PLACEHOLDER:
        from tempo_eval.llm.provider import PLACEHOLDER_API_KEY

        api_key = PLACEHOLDER_API_KEY
    judge_url = settings.get("judge_url") or None
    provider = verifier = None
    if settings["verifier"] == "llm" or "llm" in (settings["tf_mode"], settings["ndcg_mode"]):
        from tempo_eval.llm.provider import OpenAIProvider

        provider = OpenAIProvider(model=settings["judge_model"], base_url=judge_url, api_key=api_key)
    # answer currency takes the chosen verifier when the page asked for it: the spec's "with a
    # verifier chosen, when the verifier says SUPPORTED" (otherwise the word match)
    currency = "answer_currency" in (settings.get("asof") or []) and bool(settings.get("currency_by_verifier"))
    if (settings["tf"] and settings["tf_mode"] == "nli") or settings["fc"] or settings.get("turn") or currency:
        name = settings["verifier"]
        if name == "nli":
            verifier = make_verifier("nli", model=settings["nli_model"] or None)
        elif name == "llm":
            if not settings["judge_model"]:
                raise ValueError("The LLM judge has no model: give the judge's model (and endpoint) on Evaluate.")
            verifier = make_verifier("llm", model=settings["judge_model"], base_url=judge_url, api_key=api_key)
        else:
            verifier = make_verifier("lexical")
    metrics: list[Any] = []
    if settings["tf"]:
        mode = settings["tf_mode"]
        metrics.append(build_metric("temporal_faithfulness", mode=mode, verifier=verifier if mode == "nli" else None,
                                    llm=provider if mode == "llm" else None))
    if settings["ndcg"]:
        mode = settings["ndcg_mode"]
        metrics.append(build_metric("temporal_ndcg", k=settings["k"], mode=mode, llm=provider if mode == "llm" else None))
    if settings["fc"]:
        metrics.append(build_metric("factual_correctness", verifier=verifier))
    metrics.extend(asof_metrics(settings, verifier if currency else None))
    if settings.get("turn"):
        metrics.append(build_metric("turn_faithfulness", window_size=int(settings.get("window_size") or 10),
                                    threshold=float(settings.get("turn_threshold", 0.5)),
                                    penalize_ambiguous_claims=bool(settings.get("turn_penalize")), verifier=verifier))
    # a cached verifier wraps the LLM verifier, whose provider counts the tokens
    judges = {id(p): p for p in (provider, getattr(verifier, "provider", None),
                                 getattr(getattr(verifier, "verifier", None), "provider", None)) if p is not None}
    return metrics, list(judges.values())


def asof_metrics(settings: dict[str, Any], verifier: Any = None) -> list[Any]:
    """The as-of metrics the Evaluate page chose (settings "asof"), with k, max_age and half_life;
    answer currency with `verifier` (None: the word match)."""
    from tempo_eval.metrics.catalog import build_metric

    return [build_metric(name, k=settings.get("k"), max_age=settings.get("max_age"), half_life=settings.get("half_life"),
                         verifier=verifier) for name in settings.get("asof") or []]


def run_evaluation(settings: dict[str, Any], api_key: str | None, progress: Any, cancel: threading.Event, *,
                   user: str | None = None) -> Any:
    """Evaluate the stored dataset `settings["dataset_id"]` with the settings' metrics, as `user` (who
    queued the job: the run it makes is recorded as theirs)."""
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.store.runs import RunStore

    metrics, judges = evaluation_metrics(settings, api_key)
    store = RunStore()
    try:
        # a file `path` (checked by the page) is streamed by the runner; else the stored dataset
        path = settings.get("path")
        dataset = str(path) if path else store.get_dataset(int(settings["dataset_id"]))
        result = evaluate(dataset, metrics, store=store, run_name=settings.get("run_name") or None,
                          reference_date=settings.get("reference_date"), progress=progress, cancel=cancel,
                          user=user)
        for judge in judges:
            store.add_run_usage(result.run_id, judge.usage)
        return result
    finally:
        store.close()


if __name__ == "__main__":  # pragma: no cover - `python -m tempo_eval job run` is the entry
    sys.exit(main(sys.argv[1:]))
