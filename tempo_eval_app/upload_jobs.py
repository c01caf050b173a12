"""The work behind the upload boxes, run by a worker process (`python -m tempo_eval job run`),
never by the app process: reading a dataset file (Datasets), reading TREC runs with their qrels
(Datasets), importing RAGAS / DeepEval scores (Agreement).

The page writes the uploaded bytes to the workspace's uploads/ folder and queues a job naming
the saved files (`worker_jobs.save_upload`); a handler here reads them and answers a dict that
the worker stores with the job: {status, error?, result, dataset_id?, run_id?}. A file the
loaders refuse fails the job with the loader's own message (naming the file, row and field),
which the page shows in its words (`errors.in_app_terms`). With `store` false a dataset is only
read (the page shows its preview); with `store` true it is also stored in the workspace, so a
reload or another session finds it. No Streamlit here: the worker imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tempo_eval.io.errors import InputError

#: dataset rows a job hands back for the page's preview
PREVIEW_ROWS = 50


def _preview(frame: Any) -> list[dict[str, Any]]:
    """The first rows as JSON-ready records, list and dict cells as JSON text (as the tables show them)."""
    head = frame.head(PREVIEW_ROWS)
    records = []
    for record in head.to_dict("records"):
        records.append({str(k): json.dumps(v, default=str, ensure_ascii=False) if isinstance(v, (dict, list, tuple, set))
                        else v for k, v in record.items()})
    return records


def _summary(dataset: Any) -> dict[str, Any]:
    return {
        "rows": len(dataset.frame), "columns": [str(c) for c in dataset.frame.columns],
        "source_format": getattr(dataset, "source_format", ""), "mapping": dict(getattr(dataset, "mapping", {}) or {}),
        "warnings": list(dataset.warnings), "preview": _preview(dataset.frame),
    }


def _refused(exc: Exception, **result: Any) -> dict[str, Any]:
    """A job that fails with the loader's message (whole, not only its first line)."""
    return {"status": "failed", "error": str(exc) or type(exc).__name__, "result": result or None}


def _stored(dataset: Any, store_it: bool) -> dict[str, Any]:
    ended: dict[str, Any] = {"status": "finished", "result": _summary(dataset)}
    if store_it:
        from tempo_eval.store.runs import RunStore

        store = RunStore()
        try:
            ended["dataset_id"] = store.save_dataset(dataset)
        finally:
            store.close()
        ended["result"]["dataset_id"] = ended["dataset_id"]
    return ended


def read_dataset(arguments: dict[str, Any]) -> dict[str, Any]:
    """Kind `dataset_upload`: {path, name, mapping?, store}. A conversation file refused as a
    dataset says how many conversations it holds (result `conversations`)."""
    from tempo_eval.io.dataset import load_dataset

    try:
        dataset = load_dataset(arguments["path"], mapping=arguments.get("mapping"), name=arguments["name"])
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc, conversations=_conversations(arguments["path"], arguments["name"]))
    return _stored(dataset, bool(arguments.get("store")))


def _conversations(path: str, name: str) -> int:
    from tempo_eval.io.conversation import load_conversations

    try:
        return len(load_conversations(path, name=name).frame)
    except (InputError, ValueError, OSError):
        return 0


def read_runs(arguments: dict[str, Any]) -> dict[str, Any]:
    """Kind `trec_runs`: {runs: [[name, path], ...], qrels: [name, path], queries?, corpus?, store}."""
    from tempo_eval_app.retrieval import load_runs_dataset

    def named(pair: list[str] | None) -> tuple[str, bytes] | None:
        return None if pair is None else (pair[0], Path(pair[1]).read_bytes())

    try:
        dataset = load_runs_dataset(
            [named(pair) for pair in arguments["runs"]], named(arguments["qrels"]),
            queries=named(arguments.get("queries")), corpus=named(arguments.get("corpus")),
        )
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc)
    return _stored(dataset, bool(arguments.get("store")))


def import_foreign(arguments: dict[str, Any]) -> dict[str, Any]:
    """Kind `foreign_import`: {path, name}: the file's scores become a run of its dataset."""
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.store.runs import RunStore

    try:
        foreign = load_foreign_results(arguments["path"], name=arguments["name"])
    except (InputError, ValueError, OSError) as exc:
        return _refused(exc)
    store = RunStore()
    try:
        run_id = import_foreign_results(foreign, store)
        dataset_id = int(store.run_info(run_id)["dataset_id"])
    finally:
        store.close()
    return {"status": "finished", "run_id": run_id, "dataset_id": dataset_id,
            "result": {"run_id": run_id, "dataset_id": dataset_id, "warnings": list(foreign.dataset.warnings)}}


#: the job kinds of this module and their handlers
HANDLERS = {"dataset_upload": read_dataset, "trec_runs": read_runs, "foreign_import": import_foreign}
