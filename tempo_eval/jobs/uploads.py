"""The work behind the upload boxes, run by a worker process (`python -m tempo_eval job run`),
never by the app process: reading a dataset file (Datasets), reading TREC runs with their qrels
(Datasets), importing RAGAS / DeepEval scores (Agreement).

The page writes the uploaded bytes to the workspace's uploads/ folder and queues a job naming
the saved files (`worker_jobs.save_upload`); a handler here reads them and answers a dict that
the worker stores with the job: {status, error?, result, dataset_id?, run_id?}. A file the
loaders refuse fails the job with the loader's own message (naming the file, row and field),
which the page shows in its words (`errors.in_app_terms`). With `store` false a dataset is only
read (the page shows its preview); with `store` true it is also stored in the workspace, so a
reload or another session finds it. The engine owns this work (the worker imports this module);
the dashboard only queues the jobs and shows them. A TREC dataset keeps its qrels file as given
(`tempo_eval.io.trec_dataset`), so its comparison counts every judged query.

A dataset file is read in batches (`tempo_eval.io.stream.open_stream`, the whole-file reader's
checks and messages) and stored a batch at a time (`begin_dataset` / `add_dataset_rows` /
`finish_dataset`), so the worker's memory grows with a batch, not the file. Between batches the
handler reports its progress and reads the job's cancel request: a cancelled (or refused) read
removes the dataset it began storing, so no half dataset is left listed. TREC runs (read by `tempo_eval.io.trec_stream`, the command line's reader) and foreign scores
are read whole before they are stored; their cancel is seen between reading and storing.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tempo_eval.io.errors import InputError

logger = logging.getLogger("tempo_eval.job")
#: progress(rows read, rows expected), as the worker's watch takes it
Progress = Callable[[int, int], None]


class Cancelled(Exception):
    """The job's cancel request was seen between two batches."""


def _quiet(done: int, total: int) -> None:
    """No progress to report (a handler called without a watch)."""


#: dataset rows a job hands back for the page's preview
PREVIEW_ROWS = 50


def _preview(frame: Any) -> list[dict[str, Any]]:
    """The first rows as JSON-ready records, list and dict cells as JSON text (as the tables show them)."""
    return [{str(k): json.dumps(v, default=str, ensure_ascii=False) if isinstance(v, (dict, list, tuple, set))
             else v for k, v in record.items()} for record in frame.head(PREVIEW_ROWS).to_dict("records")]


def _refused(exc: Exception, **result: Any) -> dict[str, Any]:
    """A job that fails with the loader's message (whole, not only its first line)."""
    return {"status": "failed", "error": str(exc) or type(exc).__name__, "result": result or None}


CANCELLED = {"status": "cancelled", "error": None, "result": None}


def _read(stream: Any, store_it: bool, progress: Progress, cancel: threading.Event,
          user: str | None = None) -> dict[str, Any]:
    """Read every batch of `stream` (a `DatasetStream`), storing it when `store_it` (as `user`'s
    dataset when it is new: the user who queued the job); answers the
    job's end: finished with the summary the page shows, or cancelled. A read that stops (cancel
    or a bad row) removes the dataset it created part way, then raises."""
    store = None
    dataset_id = None
    write = False
    if store_it:
        from tempo_eval.store.runs import RunStore

        store = RunStore()
    try:
        if store is not None:  # a batch at a time, also a file read whole (its first rows read alone later)
            # not complete: new, or a half dataset a killed read left (removed too if this one
            # stops); a complete one (stored by anyone before) is only found, never removed
            dataset_id, complete = store.begin_dataset(name=stream.name, content_hash=stream.content_hash,
                                                       mapping=stream.mapping, source_format=stream.source_format,
                                                       user=user)
            write = not complete
        preview: list[dict[str, Any]] | None = None
        read = 0
        for offset, frame in stream.batches():
            if cancel.is_set():
                raise Cancelled
            if preview is None:
                preview = _preview(frame)
            if write:
                store.add_dataset_rows(dataset_id, offset, frame)
            read = offset + len(frame)
            progress(read, max(read, stream.estimated_rows or 0))
        if cancel.is_set():
            raise Cancelled
        n_rows = stream.n_rows if stream.n_rows is not None else read
        if write:
            store.finish_dataset(dataset_id, n_rows, stream.warnings)
        qrels = getattr(stream.dataset, "qrels", None)
        if store is not None and qrels is not None and store.dataset_qrels(dataset_id) is None:
            store.save_dataset_qrels(dataset_id, qrels)  # TREC runs: the judgements their comparison reads
        progress(n_rows, n_rows)
        summary = {"rows": n_rows, "columns": [str(c) for c in stream.columns], "source_format": stream.source_format,
                   "mapping": dict(stream.mapping or {}), "warnings": list(stream.warnings), "preview": preview or []}
        ended: dict[str, Any] = {"status": "finished", "result": summary}
        if store is not None:
            ended["dataset_id"] = summary["dataset_id"] = int(dataset_id)
        return ended
    except BaseException:
        if write:
            _remove_partial(store, dataset_id)
        raise
    finally:
        if store is not None:
            store.close()


def _remove_partial(store: Any, dataset_id: int) -> None:
    """Delete a dataset this job was storing and did not finish, unless a run uses it already
    (an evaluation of the same file that found it, or an interrupted one that resumes: its rows
    are written again by that run)."""
    try:
        if store.dataset_dependents(dataset_id)["runs"] == 0:
            store.delete_dataset(dataset_id)
    except Exception:  # the job's own end is what matters; the log says why the rows stayed
        logger.warning("dataset %d read part way was not removed", dataset_id, exc_info=True)


def read_dataset(arguments: dict[str, Any], progress: Progress = _quiet,
                 cancel: threading.Event | None = None, *, user: str | None = None) -> dict[str, Any]:
    """Kind `dataset_upload`: {path, name, mapping?, store}. A conversation file refused as a
    dataset says how many conversations it holds (result `conversations`)."""
    from tempo_eval.io.stream import open_stream

    cancel = cancel or threading.Event()
    try:
        stream = open_stream(arguments["path"], arguments.get("mapping"), name=arguments["name"])
        return _read(stream, bool(arguments.get("store")), progress, cancel, user)
    except Cancelled:
        return dict(CANCELLED)
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc, conversations=_conversations(arguments["path"], arguments["name"]))


def _conversations(path: str, name: str) -> int:
    from tempo_eval.io.conversation import load_conversations

    try:
        return len(load_conversations(path, name=name).frame)
    except (InputError, ValueError, OSError):
        return 0


def read_runs(arguments: dict[str, Any], progress: Progress = _quiet,
              cancel: threading.Event | None = None, *, user: str | None = None) -> dict[str, Any]:
    """Kind `trec_runs`: {runs: [[name, path], ...], qrels: [name, path], queries?, corpus?, store}."""
    from tempo_eval.io.stream import frame_stream
    from tempo_eval.io.trec_dataset import load_runs_dataset

    cancel = cancel or threading.Event()

    def named(pair: list[str] | None) -> tuple[str, Path] | None:
        return None if pair is None else (pair[0], Path(pair[1]))

    try:
        dataset = load_runs_dataset(
            [named(pair) for pair in arguments["runs"]], named(arguments["qrels"]),
            queries=named(arguments.get("queries")), corpus=named(arguments.get("corpus")),
        )
        return _read(frame_stream(dataset), bool(arguments.get("store")), progress, cancel, user)
    except Cancelled:
        return dict(CANCELLED)
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc)


def import_foreign(arguments: dict[str, Any], progress: Progress = _quiet,
                   cancel: threading.Event | None = None, *, user: str | None = None) -> dict[str, Any]:
    """Kind `foreign_import`: {path, name}: the file's scores become a run of its dataset."""
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.store.runs import RunStore

    try:
        foreign = load_foreign_results(arguments["path"], name=arguments["name"])
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc)
    if cancel is not None and cancel.is_set():  # read, nothing stored yet
        return dict(CANCELLED)
    rows = len(foreign.dataset.frame)
    progress(rows // 2, rows)
    store = RunStore()
    try:
        run_id = import_foreign_results(foreign, store, user=user)
        dataset_id = int(store.run_info(run_id)["dataset_id"])
    finally:
        store.close()
    progress(rows, rows)
    return {"status": "finished", "run_id": run_id, "dataset_id": dataset_id,
            "result": {"run_id": run_id, "dataset_id": dataset_id, "warnings": list(foreign.dataset.warnings)}}


#: the job kinds of this module and their handlers (each takes `user=`: who queued the job)
HANDLERS = {"dataset_upload": read_dataset, "trec_runs": read_runs, "foreign_import": import_foreign}
