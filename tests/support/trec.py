"""TREC runs and qrels read by the one reader (`tempo_eval.io.trec_stream`), seen as the
{query: {document: value}} mappings ranx and pytrec_eval take, for tests that check values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs

#: every document of every query is kept
WHOLE = 2**40


@dataclass
class RunView:
    name: str
    scores: dict[str, dict[str, float]]
    order: dict[str, list[str]]
    notes: list[str] = field(default_factory=list)

    def ranking(self, qid: str) -> list[str]:
        """The documents of `qid` in the reader's (trec_eval's) order."""
        return self.order.get(qid, [])

    def query_ids(self) -> list[str]:
        return list(self.scores)


@dataclass
class QrelsView:
    name: str
    judgments: dict[str, dict[str, int]]


def load_run(sources: Any, **options: Any) -> dict[str, RunView]:
    """Every run of the files (one source or a list), whole, scores as doubles."""
    codes = QueryCodes()
    runs = read_runs(sources if isinstance(sources, (list, tuple)) else [sources], codes, keep=WHOLE,
                     precision=options.pop("precision", "double"), **options)
    views = {}
    for name, run in runs.items():
        scores: dict[str, dict[str, float]] = {}
        order: dict[str, list[str]] = {}
        for code, doc, score in zip(run.codes.tolist(), run.docids.to_pylist(), run.scores.tolist(), strict=True):
            scores.setdefault(codes.ids[code], {})[doc] = score
            order.setdefault(codes.ids[code], []).append(doc)
        views[name] = RunView(name, scores, order, run.notes)
    return views


def load_qrels(source: Any, **options: Any) -> QrelsView:
    codes = QueryCodes()
    qrels = read_qrels(source, codes, **options)
    judged: dict[str, dict[str, int]] = {}
    for code, doc, grade in zip(qrels.codes.tolist(), qrels.docids.to_pylist(), qrels.grades.tolist(), strict=True):
        judged.setdefault(codes.ids[code], {})[doc] = grade
    return QrelsView(qrels.name, judged)


def ndcg_per_query(run: dict, qrels: dict, k: int, **options: Any) -> dict[str, float]:
    """NDCG@k of each judged query (one with a relevant document), by the command line's kernel
    and rule: 0.0 where the run has no results for it (trec_eval -c)."""
    from tempo_eval.compare.trec_scores import score_trec_runs

    scores = score_trec_runs({"run": run}, qrels, metrics=[f"ndcg@{k}"], **options)
    return scores.per_query["run"][f"ndcg@{k}"]
