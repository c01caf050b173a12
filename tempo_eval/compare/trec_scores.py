"""Per-query NDCG of TREC run files against qrels, read as streams: the command line's and the
app's one path for run files of any size.

    scores = score_trec_files(["bm25.run.gz", "dense.run"], "qrels.txt", metrics=["ndcg@10"])
    scores.per_query["bm25"]["ndcg@10"]["q1"]      # 0.63
    scores.missing["bm25"]                          # judged queries bm25 has no results for
    report = compare_scores(scores, test="student") # tempo_eval.compare.statistics's report

Each run keeps only every query's top min(depth, largest k) documents while it is read
(`tempo_eval.io.trec_stream`), so memory grows with queries x k, not with the files.

Judged queries without results (one rule for the engine, the command line and the app): a judged
query is one with a relevant document in the qrels. When a run has no results for it,
`missing="zero"` (default) scores it 0 for that run, as `trec_eval -c` does; `missing="drop"`
leaves it out of every run's comparison (a query no run has is then left out too). Either way
`missing[run]` counts them per run and `missing_everywhere` counts those no run has. Queries of
a run that the qrels do not judge are ignored; a query without a relevant document is not
measurable (NaN) and is left out.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval.compare.statistics import (
    MISSING_POLICIES,
    ComparisonReport,
    missing_summary,
    parse_trec_metric,
)


@dataclass
class TrecScores:
    """Per-query values of every run and metric, after the missing-query policy."""

    runs: list[str]
    metrics: list[str]
    #: per_query[run][metric][query_id] = value
    per_query: dict[str, dict[str, dict[str, float]]]
    #: judged queries each run has no results for
    missing: dict[str, int]
    #: judged queries no run has results for
    missing_everywhere: int
    n_judged: int
    policy: str
    notes: list[str] = field(default_factory=list)
    #: NDCG@1..curve_k per run: (query ids, matrix), when asked for
    curves: dict[str, tuple[list[str], np.ndarray]] = field(default_factory=dict)
    #: the judged queries (with a relevant document), in the qrels' order
    judged: list[str] = field(default_factory=list)
    #: each run's file and tag there
    origins: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the runs' kept documents and the judgements, for `ranked_documents`
    _top: dict[str, Any] = field(default_factory=dict, repr=False)
    _qrels: Any = field(default=None, repr=False)
    _codes: Any = field(default=None, repr=False)
    #: the doc-dates and query-dates files the as-of metrics read, for `documents`
    _dates: tuple[Any, Any] | None = field(default=None, repr=False)
    #: the codes of the judged queries each run has no results for
    _absent: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def select(self, runs: Sequence[str]) -> TrecScores:
        """The same scores for some of the runs only (in the order given), the counts of judged
        queries that no chosen run has recomputed."""
        names = [r for r in runs if r in self.per_query]
        absent = [set(self._absent[r].tolist()) for r in names if r in self._absent]
        return replace(
            self, runs=names, per_query={r: self.per_query[r] for r in names},
            missing={r: self.missing[r] for r in names}, curves={r: self.curves[r] for r in names if r in self.curves},
            missing_everywhere=len(set.intersection(*absent)) if absent else 0,
            origins={r: self.origins[r] for r in names if r in self.origins},
            _top={r: self._top[r] for r in names if r in self._top},
            _absent={r: self._absent[r] for r in names if r in self._absent},
        )

    def ranked_documents(self, run: str, query_id: str, k: int) -> list[tuple[str, int]]:
        """(document id, grade) of the run's first k documents for a query (trec_eval's order)."""
        code = self._codes.code(query_id) if self._codes is not None else None
        top = self._top.get(run)
        if top is None or code is None:
            return []
        rows = np.flatnonzero(top.codes == code)[:k]
        docs = top.docids.take(rows).to_pylist()
        judged = np.flatnonzero(self._qrels.codes == code)
        grades = dict(zip(self._qrels.docids.take(judged).to_pylist(), self._qrels.grades[judged].tolist(), strict=True))
        return [(doc, int(grades.get(doc, 0))) for doc in docs]

    def documents(self, depth: int, *, dated_k: int = 0, max_age: float | None = None) -> pd.DataFrame:
        """Every run's first `depth` documents per query, one line each: run, query_id, rank,
        doc_id, grade (0 when unjudged); with the date files of the as-of metrics, also for ranks
        up to `dated_k`: date (as the doc-dates file writes it), as_of, age (days; NaN when a
        date is unknown) and flag ("future", "stale" past `max_age` days (365 by default),
        "undated", or "" for a document counted as neither). Runs in their order, each query's
        documents in trec_eval's order. Columnar: one join for the grades, one lookup per date
        file (`_dated_columns`)."""
        import pyarrow as pa

        from tempo_eval.metrics.asof import DEFAULT_MAX_AGE
        from tempo_eval.metrics.asof_columns import top_rows

        ids = pa.array(self._codes.ids if self._codes is not None else [], type=pa.string())
        codes, docids, ranks, names = [], [], [], []
        for name, run in self._top.items():
            index, _, rank = top_rows(run.codes, run.query_codes(), depth)
            codes.append(np.asarray(run.codes, dtype=np.int64)[index])
            docids.append(run.docids.take(pa.array(index, type=pa.int64())))
            ranks.append(rank + 1)
            names.append(pa.DictionaryArray.from_arrays(np.zeros(len(index), np.int32), pa.array([name])))
        code = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        doc = pa.concat_arrays(docids) if docids else pa.array([], pa.string())
        rank = np.concatenate(ranks) if ranks else np.zeros(0, np.int64)
        columns = {
            "run": pa.chunked_array(names, pa.dictionary(pa.int32(), pa.string())).cast(pa.string()),
            "query_id": ids.take(pa.array(code)), "rank": rank, "doc_id": doc, "grade": _grades(code, doc, self._qrels),
        }
        if self._dates is not None and dated_k > 0:
            shown = np.flatnonzero(rank <= dated_k)
            dated = _dated_columns(code[shown], doc.take(pa.array(shown)), ids, *self._dates,
                                   DEFAULT_MAX_AGE if max_age is None else max_age)
            # each dated column back in the frame's rows: null where the rank is past dated_k
            where = np.full(len(rank), -1, dtype=np.int64)
            where[shown] = np.arange(len(shown))
            spread = pa.array(where, mask=where < 0)
            columns.update({name: values.take(spread) for name, values in dated.items()})
        return pa.table(columns).to_pandas()

    def missing_summary(self) -> str:
        """One sentence: how many judged queries each run has no results for, and what was done."""
        return missing_summary(
            self.missing, n_judged=self.n_judged, everywhere=self.missing_everywhere, policy=self.policy
        )


def score_trec_files(runs: Sequence[Any], qrels: Any, *, metrics: Sequence[str] = ("ndcg@10",),
                     missing: str = "zero", depth: int | None = None, precision: str = "float32",
                     curve_k: int | None = None, gain_kind: str = "linear",
                     max_json_bytes: int | None = None,
                     progress: Callable[[float], None] | None = None, doc_dates: Any = None,
                     query_dates: Any = None, max_age: float | None = None,
                     half_life: float | None = None) -> TrecScores:
    """NDCG@k per run, metric and judged query from run files and a qrels file (paths, bytes or
    file-like; TREC lines, .gz / .bz2 / .zst, or JSON). See the module docstring. TREC lines have
    no size limit; a JSON file is read whole, up to `max_json_bytes` (default: the input limit).
    `progress(fraction)` is called as the run files are read.

    The as-of metrics (`future_leak@K`, `stale_evidence@K`, `median_age@K`, `recency_ndcg@K`)
    need `doc_dates` and `query_dates`, files of `id<TAB>date` lines, and take `max_age` and
    `half_life` (days, 365 by default). Future leak, stale evidence and median age cover every
    query of a run that has an as-of date, judged or not; Recency NDCG the judged queries, as
    ndcg@K (`tempo_eval.metrics.asof_columns.asof_per_query`)."""
    from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs

    cutoffs, as_of_metrics = _metrics(metrics, missing, depth)
    if as_of_metrics and (doc_dates is None or query_dates is None):
        raise ValueError(f"{', '.join(as_of_metrics)} need the publication date of each document and the "
                         "as-of date of each query: give a doc-dates and a query-dates file (id<TAB>date lines)")
    widest = max([*cutoffs.values(), *(k for _, k in as_of_metrics.values()), curve_k or 1])
    keep = min(depth, widest) if depth is not None else widest
    _check_regular_files([*runs, qrels, *([doc_dates, query_dates] if as_of_metrics else [])])
    codes = QueryCodes()
    judgments = read_qrels(qrels, codes, max_json_bytes=max_json_bytes)
    loaded = read_runs(
        list(runs), codes, keep=keep, precision=precision, max_json_bytes=max_json_bytes, progress=progress
    )
    scores = _score(loaded, judgments, codes, cutoffs, widest, missing, curve_k, gain_kind)
    if as_of_metrics:
        _add_as_of(scores, loaded, judgments, codes, as_of_metrics, list(metrics), doc_dates=doc_dates,
                   query_dates=query_dates, max_age=max_age, half_life=half_life)
    return scores


def score_dataset_runs(frame: pd.DataFrame, qrels: Any = None, *,
                       metrics: Sequence[str] = ("ndcg@10",), missing: str = "zero",
                       curve_k: int | None = None, gain_kind: str = "linear") -> TrecScores:
    """NDCG@k of the retrieval systems of a stored dataset (its `run`, `query_id` and
    `retrieved_ids` columns, each ranking in its order), with the same kernel and the same
    missing-query rule as `score_trec_files`. `qrels` is the qrels file kept with the dataset
    (bytes; every judged query, the ones no system retrieved too); without one the judgements
    are the dataset's `gold_ids` (`tempo_eval.io.trec_dataset.frame_qrels`)."""
    from tempo_eval.io.trec_dataset import frame_qrels, frame_runs
    from tempo_eval.io.trec_stream import QueryCodes, read_qrels

    cutoffs, _ = _metrics(metrics, missing, dated=False)
    codes = QueryCodes()
    judgments = read_qrels(qrels, codes) if qrels is not None else frame_qrels(frame, codes)
    loaded = frame_runs(frame, codes)
    if not loaded:
        raise ValueError("the dataset has no retrieval system (no retrieved_ids column)")
    widest = max([*cutoffs.values(), curve_k or 1])
    return _score(loaded, judgments, codes, cutoffs, widest, missing, curve_k, gain_kind)


def _metrics(metrics: Sequence[str], missing: str, depth: int | None = None, *,
             dated: bool = True) -> tuple[dict[str, int], dict[str, Any]]:
    """({NDCG metric: k}, {as-of metric: (name, k)}) of the metrics asked; ValueError naming a
    wrong one, a wrong missing-query rule or depth, or an as-of metric when the caller cannot
    give date files (`dated` False)."""
    from tempo_eval.metrics.asof_columns import parse_run_metric

    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be a positive integer, got {depth!r}")
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    as_of_metrics = {metric: parsed for metric in metrics if (parsed := parse_run_metric(metric))}
    cutoffs = {metric: parse_trec_metric(metric) for metric in metrics if metric not in as_of_metrics}
    if not cutoffs and not as_of_metrics:
        raise ValueError("no metric to compute")
    if as_of_metrics and not dated:
        raise ValueError(f"{', '.join(as_of_metrics)} need run files with date files "
                         "(score_trec_files)")
    return cutoffs, as_of_metrics


def _add_as_of(scores, loaded, judgments, codes, as_of_metrics, asked, **dated) -> None:
    """The as-of metrics' per-query values beside the NDCG ones, the metrics in the asked order."""
    from tempo_eval.metrics.asof import DEFAULT_HALF_LIFE, DEFAULT_MAX_AGE
    from tempo_eval.metrics.asof_columns import asof_per_query

    max_age, half_life = dated.pop("max_age"), dated.pop("half_life")
    per_query = asof_per_query(
        {name: (run.codes, run.docids) for name, run in loaded.items()}, codes.ids,
        (judgments.codes, judgments.docids, judgments.grades), as_of_metrics, missing=scores.policy,
        max_age=DEFAULT_MAX_AGE if max_age is None else max_age,
        half_life=DEFAULT_HALF_LIFE if half_life is None else half_life, **dated,
    )
    from tempo_eval.core.pubdates import read_id_dates

    ran = {name: {codes.ids[c] for c in np.unique(run.codes).tolist()} for name, run in loaded.items()}
    asked_ids = sorted(set().union(*ran.values())) if ran else []
    known = read_id_dates(dated["query_dates"], kind="query", wanted=asked_ids).days_of(asked_ids)
    undated = {q for q, day in zip(asked_ids, known.tolist(), strict=True) if math.isnan(day)}
    for name in scores.runs:
        for metric, values in per_query.get(name, {}).items():
            if as_of_metrics[metric][0] != "recency_ndcg":  # the run's own queries with an as-of date
                values = {q: v for q, v in values.items() if q in ran[name] and q not in undated}
            scores.per_query.setdefault(name, {})[metric] = values
    if undated:
        scores.notes.append(f"{len(undated)} queries of the runs have no as-of date in the query-dates file: "
                            "left out of the as-of metrics (e.g. {})".format(", ".join(sorted(undated)[:3])))
    scores.metrics = list(dict.fromkeys(asked))
    scores._dates = (dated["doc_dates"], dated["query_dates"])


def _grades(codes: np.ndarray, docids: Any, qrels: Any) -> np.ndarray:
    """The grade of each (query code, document id) in the qrels, 0 when unjudged (one Arrow join)."""
    import pyarrow as pa

    grade = np.zeros(len(codes), dtype=np.int64)
    if qrels is None or not len(qrels.codes) or not len(codes):
        return grade
    left = pa.table({"code": np.asarray(codes, dtype=np.int64), "docid": docids, "cell": np.arange(len(codes))})
    right = pa.table({"code": np.asarray(qrels.codes, dtype=np.int64), "docid": qrels.docids,
                      "grade": np.asarray(qrels.grades, dtype=np.int64)})
    joined = left.join(right.group_by(["code", "docid"]).aggregate([("grade", "max")]), keys=["code", "docid"],
                       join_type="inner")
    grade[joined.column("cell").to_numpy()] = joined.column("grade_max").to_numpy()
    return grade


def _dated_columns(codes: np.ndarray, docids: Any, ids: Any, doc_dates: Any, query_dates: Any,
                   max_age: float) -> dict[str, Any]:
    """date, as_of, age and flag (Arrow arrays) of documents (query codes, document ids): one
    streamed read of each date file for the ids shown; a date that cannot be read raises
    DateError naming its line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tempo_eval.core.pubdates import read_id_dates

    docs = read_id_dates(doc_dates, wanted=docids)
    published = docs.days_of(docids)
    texts = pc.utf8_trim_whitespace(docs.dates.take(pc.index_in(docids, value_set=docs.ids)))
    texts = pc.if_else(pc.equal(texts, ""), pa.scalar(None, pa.string()), texts)
    unique, inverse = np.unique(codes, return_inverse=True)
    query_ids = ids.take(pa.array(unique, type=pa.int64()))
    asked = read_id_dates(query_dates, kind="query", wanted=query_ids)
    as_of = asked.days_of(query_ids)[inverse] if len(unique) else np.zeros(0)
    age = np.floor(as_of) - np.floor(published)
    undated = pc.is_null(texts).to_numpy(zero_copy_only=False)
    known = ~np.isnan(age)
    flag = np.select([undated, known & (age < 0), known & (age > max_age)], [1, 2, 3], 0).astype(np.int8)
    labels = pa.array(np.where(np.isnan(as_of), 0, as_of).astype(np.int32), type=pa.date32(), mask=np.isnan(as_of))
    return {
        "date": texts, "as_of": labels.cast(pa.string()), "age": pa.array(age, from_pandas=True).cast(pa.float64()),
        "flag": pa.array(np.array(["", "undated", "future", "stale"], dtype=object)).take(pa.array(flag)),
    }


def _check_regular_files(sources: Sequence[Any]) -> None:
    """Every named file is a regular file (no FIFO, device or link loop), before any is read."""
    from tempo_eval.io._source import open_regular

    for source in sources:
        if isinstance(source, (str, os.PathLike)):
            os.close(open_regular(source, Path(source).name))


def _score(loaded, judgments, codes, cutoffs, widest, missing, curve_k, gain_kind) -> TrecScores:
    from tempo_eval.metrics.ndcg_columns import ideal_grades, ndcg_matrix, ranked_grades

    judged = judgments.judged_codes()
    # NDCG stops changing past the longest ranking and the most relevant documents of a query:
    # the matrices are that wide at most, so a k of 10**12 costs what its real width costs
    longest = max([1, *(int(np.bincount(r.codes).max()) for r in loaded.values() if len(r.codes))])
    relevant = judgments.codes[judgments.grades > 0]
    most = int(np.bincount(relevant).max()) if len(relevant) else 1
    widest = min(widest, max(longest, most))
    ideal = ideal_grades(judgments.codes, judgments.grades, len(codes.ids), widest)[judged]
    qrels_table = judgments.table()
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    absent_by_run: dict[str, np.ndarray] = {}
    curves: dict[str, tuple[list[str], np.ndarray]] = {}
    notes = list(dict.fromkeys(note for run in loaded.values() for note in run.notes))
    for name, run in loaded.items():
        present = np.isin(judged, run.query_codes())
        absent_by_run[name] = judged[~present]
        matrix = ndcg_matrix(ranked_grades(run.codes, run.docids, qrels_table, judged, widest), ideal, gain_kind)
        matrix[~present] = 0.0 if missing == "zero" else np.nan
        if missing == "drop":
            matrix = matrix[present]
        query_ids = [codes.ids[c] for c in (judged if missing == "zero" else judged[present])]
        per_query[name] = {
            metric: dict(zip(query_ids, matrix[:, min(k, widest) - 1].tolist(), strict=True))
            for metric, k in cutoffs.items()
        }
        if curve_k:  # flat past the width
            extra = max(0, curve_k - widest)
            curves[name] = (query_ids, np.concatenate([matrix, np.repeat(matrix[:, -1:], extra, axis=1)], axis=1)[:, :curve_k])
    everywhere = set.intersection(*(set(a.tolist()) for a in absent_by_run.values())) if absent_by_run else set()
    return TrecScores(
        runs=list(loaded), metrics=list(cutoffs), per_query=per_query,
        missing={name: len(a) for name, a in absent_by_run.items()}, missing_everywhere=len(everywhere),
        n_judged=len(judged), policy=missing, notes=notes, curves=curves,
        judged=[codes.ids[c] for c in judged], origins={name: (run.source, run.tag) for name, run in loaded.items()},
        _top=loaded, _qrels=judgments, _codes=codes, _absent=absent_by_run,
    )


def score_trec_runs(runs: Mapping[str, Any], qrels: Any, *, metrics: Sequence[str] = ("ndcg@10",),
                    missing: str = "zero", depth: int | None = None, precision: str | None = None,
                    curve_k: int | None = None, gain_kind: str = "linear") -> TrecScores:
    """`score_trec_files` for runs and qrels already in memory: `runs` maps names to
    {query: {doc: score}} (ranx / pytrec_eval runs), `qrels` is {query: {doc: integer grade}}.
    The same kernel and missing-query rule (the module docstring); `depth` keeps each query's top
    `depth` documents only (trec_eval -M); `precision` is how scores are compared when ranking:
    "float32" (default: trec_eval <= 9, pytrec_eval-terrier) or "double" (trec_eval 10.0)."""
    from tempo_eval.io.trec_stream import QueryCodes, qrels_from_mapping, runs_from_mappings

    cutoffs, _ = _metrics(metrics, missing, depth, dated=False)
    widest = max([*cutoffs.values(), curve_k or 1])
    codes = QueryCodes()
    judgments = qrels_from_mapping(qrels, codes)
    loaded = runs_from_mappings(runs, codes, keep=min(depth, widest) if depth else widest,
                                precision=precision or "float32")
    return _score(loaded, judgments, codes, cutoffs, widest, missing, curve_k, gain_kind)


def compare_trec(runs: Mapping[str, Any], qrels: Any, *, metrics: Sequence[str] = ("ndcg@10",),
                 missing: str = "zero", depth: int | None = None, precision: str | None = None,
                 **options: Any) -> ComparisonReport:
    """Compare runs held in memory against qrels (`score_trec_runs`), then
    `tempo_eval.compare.statistics.compare(..., **options)`, with the command line's rule for
    judged queries a run has no results for: `missing="zero"` (default) scores them 0, as
    `trec_eval -c` does (counted in `report.n_filled` and the caption); `missing="drop"` leaves
    them out of every run's comparison. A query without a relevant document is not judged: it
    is in no run's comparison, as on the command line."""
    scores = score_trec_runs(runs, qrels, metrics=metrics, missing=missing, depth=depth, precision=precision)
    return compare_scores(scores, **options)


def compare_scores(scores: TrecScores, **options: Any):
    """`tempo_eval.compare.statistics.compare` on the scores, its report carrying the missing-query counts."""
    from tempo_eval.compare.statistics import compare

    report = compare(scores.per_query, metrics=scores.metrics, **options)
    filled = {m: dict(scores.missing) for m in scores.metrics} if scores.policy == "zero" else {}
    return replace(report, n_filled=filled, missing_note=scores.missing_summary())


def per_query_lines(scores: TrecScores) -> Iterator[str]:
    """`run,query_id,metric,value` CSV lines (a header first), like `trec_eval -q`; values with
    full precision (repr), NaN as an empty cell. Ids are written as they are (quoted when needed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "query_id", "metric", "value"])
    for run in scores.runs:
        for metric in scores.metrics:
            for query_id, value in scores.per_query[run][metric].items():
                writer.writerow([run, query_id, metric, "" if math.isnan(value) else repr(value)])
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
