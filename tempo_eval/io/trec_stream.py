"""TREC runs read as each query's top documents only, and qrels as columns.

    codes = QueryCodes()
    qrels = read_qrels("qrels.txt", codes)
    runs = read_runs(["bm25.run.gz", "dense.run"], codes, keep=100)

Memory grows with queries x `keep`, not with the size of the files: each block of lines
(`tempo_eval.io.trec_columns`) is cut to every query's best `keep` documents before the next is
read. The order is trec_eval's: score descending, ties broken by document id descending (byte
order, trec_eval's strcmp), scores compared as float32 (trec_eval <= 9, pytrec_eval-terrier) or
as doubles (`precision`; see `tempo_eval.core.ranking`). So a query's top `keep` here are the
first `keep` of the ranking `tempo_eval.io.trec.Run.ranking` gives, and NDCG@k for any k <= keep
is the same as on the whole file. Ties at the cut are all kept until the end, where document ids
decide; a run whose scores are all equal is held whole.

Query ids are interned (`QueryCodes`: int32 codes shared by the qrels and every run); document
ids stay in Arrow string arrays, scores in numpy. JSON runs and qrels (ranx / pytrec_eval) are
read by `tempo_eval.io.trec` and turned into the same columns. A document twice in one query's
kept documents is an error, as in trec_eval; twice below the cut it is not looked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tempo_eval.io.errors import InputError
from tempo_eval.io.trec_columns import BLOCK_BYTES, iter_blocks, source_name, starts_with_json


class QueryCodes:
    """Query ids as int32 codes, in order of first appearance; shared by qrels and runs."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}
        self.ids: list[str] = []

    def code(self, query_id: str) -> int:
        found = self._codes.get(query_id)
        if found is None:
            found = self._codes[query_id] = len(self.ids)
            self.ids.append(query_id)
        return found

    def encode(self, column: Any) -> np.ndarray:
        """int32 codes of an Arrow string column (one Python call per distinct id)."""
        encoded = pc.dictionary_encode(column)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        lookup = np.fromiter(map(self.code, encoded.dictionary.to_pylist()), np.int32, len(encoded.dictionary))
        return lookup[encoded.indices.to_numpy(zero_copy_only=False)] if len(lookup) else np.zeros(0, np.int32)


@dataclass
class TopRun:
    """One run's best documents per query: rows grouped by query code, best first."""

    name: str
    codes: np.ndarray
    docids: pa.Array
    notes: list[str] = field(default_factory=list)
    #: the file it came from and its tag there ("None" for a JSON run)
    source: str = ""
    tag: str = ""

    def positions(self) -> np.ndarray:
        """0-based rank of each row within its query."""
        return _ranks_in_groups(self.codes)

    def query_codes(self) -> np.ndarray:
        """The codes of the queries the run has results for."""
        return np.unique(self.codes)


@dataclass
class QrelsColumns:
    """Judgements as columns: query code, document id, integer grade."""

    name: str
    codes: np.ndarray
    docids: pa.Array
    grades: np.ndarray

    def judged_codes(self) -> np.ndarray:
        """Codes of the queries with at least one relevant document (grade > 0)."""
        return np.unique(self.codes[self.grades > 0])

    def table(self) -> pa.Table:
        return pa.table({"code": self.codes, "docid": self.docids, "grade": self.grades})


def read_qrels(
    source: Any, codes: QueryCodes, *, block_bytes: int = BLOCK_BYTES, max_json_bytes: int | None = None
) -> QrelsColumns:
    """Qrels from a path, bytes or file-like (TREC lines, compressed or not, or JSON); InputError
    naming the line when malformed, and when a (query, document) pair is judged twice. JSON is
    read whole, up to `max_json_bytes` (default: the input limit of `tempo_eval.io._source`)."""
    name = source_name(source, "qrels")
    if starts_with_json(source, name):
        from tempo_eval.io.trec import load_qrels

        judged = load_qrels(source, max_bytes=max_json_bytes).judgments
        qids = [q for q, docs in judged.items() for _ in docs]
        docids = pa.array([d for docs in judged.values() for d in docs], pa.string())
        grades = np.fromiter((g for docs in judged.values() for g in docs.values()), np.int64)
        return QrelsColumns(name, codes.encode(pa.array(qids, pa.string())), docids, grades)
    parts = list(iter_blocks(source, "qrels", name=name, block_bytes=block_bytes))
    qid = pa.concat_arrays([p.columns["qid"] for p in parts])
    docids = pa.concat_arrays([p.columns["docid"] for p in parts])
    grades = np.concatenate([p.columns["rel"] for p in parts])
    if not len(grades):
        raise InputError(
            "no judgements found (the file is empty or only comments); expected 4 fields separated by "
            "spaces or tabs: qid iter docid rel",
            source=name,
        )
    qrels = QrelsColumns(name, codes.encode(qid), docids, grades)
    first = _first_duplicate(qrels.codes, docids)
    if first is not None:
        from tempo_eval.io.trec import load_qrels

        load_qrels(source, max_bytes=2**62)  # names both lines
        raise InputError(  # pragma: no cover - load_qrels raised
            f"document {docids[first].as_py()!r} is judged twice for one query", source=name,
        )
    return qrels


def read_runs(
    sources: Sequence[Any],
    codes: QueryCodes,
    *,
    keep: int,
    precision: str = "float32",
    block_bytes: int = BLOCK_BYTES,
    max_json_bytes: int | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, TopRun]:
    """Runs keyed by name (the tag column; see `tempo_eval.io.trec.load_run` for the names given
    when tags clash), each holding every query's top `keep` documents in trec_eval's order.
    A JSON run is read whole, up to `max_json_bytes` (default: the input limit). `progress` is
    called with the share of the files read so far (files counted equally)."""
    from tempo_eval.core.ranking import require_precision
    from tempo_eval.io.trec import assign_run_names

    require_precision(precision)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"keep must be a positive integer, got {keep!r}")
    if not sources:
        raise InputError("no run files given; expected at least one TREC run file")
    files: list[tuple[str, dict[str, _TopK], list[str]]] = []
    for index, source in enumerate(sources):
        name = source_name(source, "run")
        within = None if progress is None else (lambda f, i=index: progress((i + f) / len(sources)))
        tops: dict[str, _TopK] = {}
        notes: list[str] = []
        if starts_with_json(source, name):
            _read_json_run(source, name, codes, tops, notes, keep, precision, max_json_bytes)
        else:
            _read_trec_run(source, name, codes, tops, notes, keep, precision, block_bytes, within)
        if not tops:
            raise InputError(
                "no run lines found (the file is empty or only comments); expected 6 fields separated "
                "by spaces or tabs: qid Q0 docid rank score tag",
                source=name,
            )
        files.append((name, tops, notes))
    names = assign_run_names([(name, list(tops)) for name, tops, _ in files])
    runs: dict[str, TopRun] = {}
    for index, (source, tops, notes) in enumerate(files):
        for tag, top in tops.items():
            run_name, name_notes = names[index, tag]
            run_codes, docids = top.finish()
            _refuse_duplicates(run_codes, docids, codes, source, run_name)
            runs[run_name] = TopRun(run_name, run_codes, docids, [*notes, *name_notes], source, tag)
    return runs


def _read_trec_run(source, name, codes, tops, notes, keep, precision, block_bytes, progress) -> None:
    extra: list[int] = []
    for block in iter_blocks(source, "run", name=name, block_bytes=block_bytes, progress=progress):
        extra.extend(block.extra_lines)
        columns = block.columns
        tag = columns["tag"]
        if not len(tag):
            continue
        query = codes.encode(columns["qid"])
        first = tag[0].as_py()
        if pc.all(pc.equal(tag, first)).as_py():
            groups = [(first, None)]
        else:
            groups = [(t, pc.equal(tag, t)) for t in pc.unique(tag).to_pylist()]
        for value, mask in groups:
            rows = slice(None) if mask is None else mask.to_numpy(zero_copy_only=False)
            docids = columns["docid"] if mask is None else columns["docid"].filter(mask)
            top = tops.get(value) or tops.setdefault(value, _TopK(keep, precision))
            top.add(query[rows], columns["score"][rows], docids)
    if extra:
        notes.append(
            f"{name}: {len(extra)} line(s) have more than 6 fields (first at line {extra[0]}); "
            "the fields after the tag are ignored, as trec_eval does"
        )


def _read_json_run(source, name, codes, tops, notes, keep, precision, max_bytes) -> None:
    from tempo_eval.io.trec import load_run

    for run in load_run([source], max_bytes=max_bytes).values():
        qids = [q for q, docs in run.scores.items() for _ in docs]
        docids = pa.array([d for docs in run.scores.values() for d in docs], pa.string())
        scores = np.fromiter((s for docs in run.scores.values() for s in docs.values()), np.float64)
        top = tops.setdefault("None", _TopK(keep, precision))  # named from the file
        top.add(codes.encode(pa.array(qids, pa.string())), scores, docids)
        notes.extend(note for note in run.notes if "named" not in note)


class _TopK:
    """Each query's best `keep` rows of one run, gathered block by block (ties at the cut kept)."""

    def __init__(self, keep: int, precision: str) -> None:
        self.keep = keep
        self.precision = precision
        self.parts: list[tuple[np.ndarray, np.ndarray, pa.Array]] = []
        self.pending = 0
        self.kept = 0

    def add(self, codes: np.ndarray, scores: np.ndarray, docids: pa.Array) -> None:
        compared = _compared(scores, self.precision)
        chosen = _candidates(codes, compared, self.keep)
        self.parts.append((codes[chosen], compared[chosen], docids.take(pa.array(chosen))))
        self.pending += len(chosen)
        if self.pending > 2 * self.kept + 1_000_000:
            codes, compared, docids = self._joined()
            chosen = _candidates(codes, compared, self.keep)
            self.parts = [(codes[chosen], compared[chosen], docids.take(pa.array(chosen)))]
            self.kept = self.pending = len(chosen)

    def _joined(self) -> tuple[np.ndarray, np.ndarray, pa.Array]:
        codes = np.concatenate([p[0] for p in self.parts])
        compared = np.concatenate([p[1] for p in self.parts])
        docids = pa.concat_arrays([p[2] for p in self.parts])
        return codes, compared, docids

    def finish(self) -> tuple[np.ndarray, pa.Array]:
        """(codes, docids) of the kept rows in trec_eval order, `keep` per query at most."""
        codes, compared, docids = self._joined()
        table = pa.table({"code": codes, "score": compared, "docid": docids})
        order = pc.sort_indices(
            table, sort_keys=[("code", "ascending"), ("score", "descending"), ("docid", "descending")]
        ).to_numpy()
        codes = codes[order]
        within = _ranks_in_groups(codes) < self.keep
        return codes[within], docids.take(pa.array(order[within]))


def _compared(scores: np.ndarray, precision: str) -> np.ndarray:
    """Scores as ranking compares them (float32 roundings, or doubles); -0.0 made 0.0."""
    if precision == "float32":
        with np.errstate(over="ignore"):
            scores = scores.astype(np.float32)
    return scores + scores.dtype.type(0.0)


def _candidates(codes: np.ndarray, scores: np.ndarray, keep: int) -> np.ndarray:
    """Indices of each query's best `keep` rows by score, with every row tied at the cut."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, np.int64)
    same = codes[1:] == codes[:-1]
    if bool(np.all((codes[1:] > codes[:-1]) | (same & (scores[1:] <= scores[:-1])))):
        order = None  # already grouped by query, best first (the usual run file)
        sorted_codes, sorted_scores = codes, scores
    else:
        order = np.lexsort((-scores, codes))
        sorted_codes, sorted_scores = codes[order], scores[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sizes = np.diff(np.r_[starts, n])
    group = np.repeat(np.arange(len(starts)), sizes)
    rank = np.arange(n) - starts[group]
    full = sizes > keep
    if not full.any():
        return np.arange(n) if order is None else order
    threshold = np.full(len(starts), -np.inf, dtype=sorted_scores.dtype)
    threshold[full] = sorted_scores[starts[full] + keep - 1]
    mask = (rank < keep) | (full[group] & (sorted_scores == threshold[group]))
    chosen = np.flatnonzero(mask)
    return chosen if order is None else order[chosen]


def _ranks_in_groups(codes: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal codes."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, np.int64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    return np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))


def _first_duplicate(codes: np.ndarray, docids: pa.Array) -> int | None:
    """The index of a row whose (code, docid) an earlier row has, or None."""
    if len(codes) < 2:
        return None
    order = pc.sort_indices(pa.table({"c": codes, "d": docids}), sort_keys=[("c", "ascending"), ("d", "ascending")])
    order = order.to_numpy()
    sorted_docids = docids.take(pa.array(order))
    same = (codes[order][1:] == codes[order][:-1]) & pc.equal(sorted_docids[1:], sorted_docids[:-1]).to_numpy(
        zero_copy_only=False
    )
    found = np.flatnonzero(same)
    return int(order[found[0] + 1]) if len(found) else None


def _refuse_duplicates(codes: np.ndarray, docids: pa.Array, queries: QueryCodes, source: str, run: str) -> None:
    first = _first_duplicate(codes, docids)
    if first is not None:
        raise InputError(
            f"document {docids[first].as_py()!r} appears twice for query {queries.ids[codes[first]]!r} in run "
            f"{run!r}; expected each (query, document) pair once (trec_eval refuses duplicates too)",
            source=source,
        )
