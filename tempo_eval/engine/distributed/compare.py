"""`compare --engine ray`: every run file scored by a Ray task of its own, with the local engine's
code (`tempo_eval.compare.trec_scores.score_trec_files` on that file), so the values are the same.

    scores = score_trec_files_ray(["bm25.run.gz", ...], "qrels.txt", metrics=["ndcg@10"])

Each task reads the qrels and one run file (the paths must be readable on every node: a shared
file system, as for `evaluate --engine ray`) and returns only the per-query values of the queries
the run has, never its documents. The driver then names the runs as the local engine does (a tag
several files use gives way to the file names), applies the missing-query rule and counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tempo_eval.compare.trec_scores import TrecScores


def _score_one(run: str, qrels: str, metrics: tuple[str, ...], depth: int | None, precision: str,
               max_json_bytes: int | None) -> dict[str, Any]:
    from tempo_eval.compare.trec_scores import score_trec_files

    scores = score_trec_files([run], qrels, metrics=metrics, missing="drop", depth=depth, precision=precision,
                              max_json_bytes=max_json_bytes)
    return {
        "per_query": scores.per_query, "judged": scores.judged, "notes": scores.notes,
        "origins": scores.origins,
    }


def combine(parts: Sequence[dict[str, Any]], metrics: Sequence[str], missing: str) -> TrecScores:
    """One TrecScores from the tasks' results, in file order (pure: tested without Ray)."""
    from tempo_eval.io.trec_stream import assign_run_names

    judged = parts[0]["judged"] if parts else []
    files = [(next(iter(p["origins"].values()))[0] if p["origins"] else "", [o[1] for o in p["origins"].values()])
             for p in parts]
    names = assign_run_names(files)
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    absent: dict[str, set[str]] = {}
    notes: list[str] = []
    for index, part in enumerate(parts):
        notes.extend(part["notes"])
        for local_name, (_, tag) in part["origins"].items():
            name, name_notes = names[index, tag]
            notes.extend(name_notes)
            values = part["per_query"][local_name]
            present = values[metrics[0]]
            absent[name] = {q for q in judged if q not in present}
            if missing == "zero":
                per_query[name] = {m: {q: values[m].get(q, 0.0) for q in judged} for m in metrics}
            else:
                per_query[name] = values
    everywhere = set.intersection(*absent.values()) if absent else set()
    return TrecScores(
        runs=list(per_query), metrics=list(metrics), per_query=per_query,
        missing={name: len(a) for name, a in absent.items()}, missing_everywhere=len(everywhere),
        n_judged=len(judged), policy=missing, notes=list(dict.fromkeys(notes)), judged=list(judged),
    )


def score_trec_files_ray(runs: Sequence[str], qrels: str, *, metrics: Sequence[str] = ("ndcg@10",),
                         missing: str = "zero", depth: int | None = None,
                         precision: str = "float32", address: str | None = None,
                         max_json_bytes: int | None = None) -> TrecScores:
    """`score_trec_files` with one Ray task per run file; joins `address` (default: the running
    Ray, else a local one started and stopped here)."""
    from tempo_eval.common.extras import require_extra

    require_extra("ray", "ray", "compare --engine ray")
    import ray

    from tempo_eval.compare.statistics import MISSING_POLICIES, parse_trec_metric

    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    for metric in metrics:
        parse_trec_metric(metric)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=True)
    try:
        task = ray.remote(_score_one)
        refs = [task.remote(str(run), str(qrels), tuple(metrics), depth, precision, max_json_bytes) for run in runs]
        try:
            parts = ray.get(refs)
        except ray.exceptions.RayTaskError as error:  # a bad file: its own message, not a traceback
            cause = getattr(error, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None
            raise
    finally:
        if started_here:
            ray.shutdown()
    return combine(parts, list(metrics), missing)
