"""TREC runs read as each query's top documents only, and qrels as columns.

    codes = QueryCodes()
    qrels = read_qrels("qrels.txt", codes)
    runs = read_runs(["bm25.run.gz", "dense.run"], codes, keep=100)

Memory grows with queries x `keep`, not with the size of the files: each block of lines
(`tempo_eval.io.trec_columns`) is cut to every query's best `keep` documents before the next is
read. The order is trec_eval's: score descending, ties broken by document id descending (byte
order, trec_eval's strcmp), scores compared as float32 (trec_eval <= 9, pytrec_eval-terrier) or
as doubles (`precision`; see `tempo_eval.core.ranking`). So a query's top `keep` here are the
first `keep` of trec_eval's ranking (`tempo_eval.core.ranking`), and NDCG@k for any k <= keep
is the same as on the whole file. Ties at the cut are all kept until the end, where document ids
decide; a run whose scores are all equal is held whole.

Query ids are interned (`QueryCodes`: int32 codes shared by the qrels and every run); document
ids stay in Arrow string arrays, scores in numpy. JSON runs and qrels (ranx `Run.save` /
`Qrels.save`, pytrec_eval's dicts: a file whose text starts with `{`, one object
`{qid: {docid: score}}` or `{qid: {docid: grade}}` with integer grades) are read whole and turned
into the same columns, and so are runs and qrels already in memory as such mappings
(`runs_from_mappings`, `qrels_from_mapping`). A document twice in one query's kept documents is
an error naming both lines, as trec_eval refuses it; twice below the cut it is not looked for.

Run names: the tag column names the run; one file may hold several runs. A tag that several
files share, and the tag `None` (ranx saves an unnamed run so), give way to the file's name (its
stem; `stem:tag` when the file holds several runs), with a note (`assign_run_names`); a JSON run
is named from its file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from numbers import Real
from pathlib import PurePath
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tempo_eval.core.ranking import _at_precision, require_precision
from tempo_eval.io._source import source_name
from tempo_eval.io.errors import InputError, parse_json_document, quote
from tempo_eval.io.trec_columns import (
    BLOCK_BYTES,
    QRELS_EXPECTED,
    RUN_EXPECTED,
    iter_blocks,
    pair_lines,
    starts_with_json,
)


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
    #: each row's score as ranking compared it (float32 roundings, or doubles)
    scores: np.ndarray | None = None

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
        return qrels_from_mapping(_json_document(source, name, "qrels", max_json_bytes), codes, name)
    parts = list(iter_blocks(source, "qrels", name=name, block_bytes=block_bytes))
    if not sum(len(p.columns["rel"]) for p in parts):
        raise InputError("no judgements found (the file is empty or only comments); "
                         + QRELS_EXPECTED, source=name)
    docids = pa.concat_arrays([p.columns["docid"] for p in parts])
    grades = np.concatenate([p.columns["rel"] for p in parts])
    qrels = QrelsColumns(name, codes.encode(pa.concat_arrays([p.columns["qid"] for p in parts])), docids, grades)
    first = _first_duplicate(qrels.codes, docids)
    if first is not None:
        raise _duplicate(source, name, codes.ids[qrels.codes[first]], docids[first].as_py())
    return qrels


def qrels_from_mapping(judgments: Any, codes: QueryCodes, name: str = "qrels") -> QrelsColumns:
    """Qrels columns from `{query id: {document id: integer grade}}` (ranx / pytrec_eval qrels in
    memory, or a JSON file's object); InputError naming the query and document when malformed."""
    query, grades, docids = _columns_of(judgments, name, "qrels", codes)
    return QrelsColumns(name, query, docids, grades.astype(np.int64))


def runs_from_mappings(
    runs: Mapping[str, Any], codes: QueryCodes, *, keep: int, precision: str = "float32"
) -> dict[str, TopRun]:
    """Runs in memory, `{run name: {query id: {document id: score}}}`, as `read_runs` gives them:
    each query's top `keep` documents in trec_eval's order. InputError naming the run, query and
    document when a score is not a number."""
    require_precision(precision)
    _require_keep(keep)
    out: dict[str, TopRun] = {}
    for name, run in runs.items():
        top = _TopK(keep, precision)
        top.add(*_columns_of(run, str(name), "run", codes))
        run_codes, docids, scores = top.finish()
        out[str(name)] = TopRun(str(name), run_codes, docids, [], str(name), "None", scores)
    return out


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
    """Runs keyed by name (the tag column; `assign_run_names` gives the names when tags
    clash), each holding every query's top `keep` documents in trec_eval's order.
    A JSON run is read whole, up to `max_json_bytes` (default: the input limit). `progress` is
    called with the share of the files read so far (files counted equally)."""
    require_precision(precision)
    _require_keep(keep)
    if not sources:
        raise InputError("no run files given; expected at least one TREC run file")
    files: list[tuple[Any, str, dict[str, _TopK], list[str]]] = []
    for index, source in enumerate(sources):
        name = source_name(source, "run")
        within = None if progress is None else (lambda f, i=index: progress((i + f) / len(sources)))
        tops: dict[str, _TopK] = {}
        notes: list[str] = []
        if starts_with_json(source, name):  # one run, named from the file
            document = _json_document(source, name, "run", max_json_bytes)
            tops["None"] = _TopK(keep, precision)
            tops["None"].add(*_columns_of(document, name, "run", codes))
        else:
            _read_trec_run(source, name, codes, tops, notes, keep, precision, block_bytes, within)
        if not tops:
            raise InputError("no run lines found (the file is empty or only comments); "
                             + RUN_EXPECTED, source=name)
        files.append((source, name, tops, notes))
    names = assign_run_names([(name, list(tops)) for _, name, tops, _ in files])
    runs: dict[str, TopRun] = {}
    for index, (source, name, tops, notes) in enumerate(files):
        for tag, top in tops.items():
            run_name, name_notes = names[index, tag]
            run_codes, docids, scores = top.finish()
            first = _first_duplicate(run_codes, docids)
            if first is not None:
                raise _duplicate(source, name, codes.ids[run_codes[first]], docids[first].as_py(), tag)
            runs[run_name] = TopRun(run_name, run_codes, docids, [*notes, *name_notes], name, tag, scores)
    return runs


def assign_run_names(files: Sequence[tuple[str, Sequence[str]]]) -> dict[tuple[int, str], tuple[str, list[str]]]:
    """{(file index, tag): (run name, notes)} for the tags of each file, in order: a tag used in
    several files, and the tag "None", give way to the file's name (see the module doc); a name
    taken twice gets " (2)", " (3)", ..."""
    files_of: dict[str, list[str]] = {}
    for source, tags in files:
        for tag in tags:
            files_of.setdefault(tag, []).append(source)
    names: dict[tuple[int, str], tuple[str, list[str]]] = {}
    taken: set[str] = set()
    for index, (source, tags) in enumerate(files):
        for tag in tags:
            name, notes = tag, []
            if tag == "None" or len(files_of[tag]) > 1:
                name = _stem(source) if len(tags) == 1 else f"{_stem(source)}:{tag}"
                why = (
                    "the tag None (a ranx run saved without a name)" if tag == "None"
                    else f"the tag {tag!r}, which {_other_files(files_of[tag], source)} also uses"
                )
                notes.append(f"{source}: has {why}; the run is named {name!r} from the file name")
            unique, number = name, 2
            while unique in taken:
                unique, number = f"{name} ({number})", number + 1
            if unique != name:
                notes.append(f"{source}: another run is already named {name!r}; this one is {unique!r}")
            taken.add(unique)
            names[index, tag] = (unique, notes)
    return names


def _other_files(files: list[str], source: str) -> str:
    """The files besides `source` that hold a tag, for a note: "b.run, c.run", or "another file
    named a.run" when two files of the same name (in two folders) hold it."""
    others = list(dict.fromkeys(f for f in files if f != source))
    if files.count(source) > 1:
        others.append(f"another file named {source}")
    return ", ".join(others)


def _stem(source: str) -> str:
    """The file name without its extensions (.gz, then one more): 'bm25.run.gz' -> 'bm25'."""
    path = PurePath(source)
    name = path.name
    for suffix in reversed(path.suffixes[-2:]):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            if suffix.lower() != ".gz":
                break
    return name or source


def _require_keep(keep: Any) -> None:
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"keep must be a positive integer, got {keep!r}")


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


def _json_document(source: Any, name: str, kind: str, max_bytes: int | None) -> Any:
    """The object of a JSON run or qrels file, read whole (up to `max_bytes`, default the input
    limit; gzip or zstd decompressed)."""
    from tempo_eval.io._source import decode_text, gunzip_if_needed, read_input

    raw = read_input(source, name=name, default_name=kind, max_bytes=max_bytes)
    return parse_json_document(decode_text(gunzip_if_needed(raw), name, []), name, _EXPECTED[kind])


_EXPECTED = {
    "run": 'expected {"query id": {"doc id": score, ...}, ...} (a ranx or pytrec_eval run)',
    "qrels": 'expected {"query id": {"doc id": grade, ...}, ...} with integer grades (ranx or pytrec_eval qrels)',
}


def _columns_of(document: Any, source: str, kind: str, codes: QueryCodes) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(query codes, values, document ids) of a ranx / pytrec_eval mapping {qid: {docid: value}},
    checked: string document ids, numbers (not NaN) as scores, integer grades for qrels; InputError
    naming the query and document otherwise. The checks run once per type and column, not per value."""
    expected = _EXPECTED[kind]
    if not isinstance(document, Mapping) or not document:
        raise InputError(f"found no queries; {expected}", source=source)
    qids: list[Any] = []
    docs: list[Any] = []
    values: list[Any] = []
    for qid, per_query in document.items():
        if not isinstance(per_query, Mapping):
            raise InputError(f"query {qid!r} holds {type(per_query).__name__}; {expected}", source=source,
                             column=str(qid), column_label="query")
        qids.extend(repeat(str(qid), len(per_query)))
        docs.extend(per_query)
        values.extend(per_query.values())
    bad = next((i for t in set(map(type, docs)) if t is not str for i, d in enumerate(docs) if type(d) is t), None)
    if bad is None:
        bad = next((i for t in set(map(type, values)) if not issubclass(t, Real) or issubclass(t, (bool, np.bool_))
                    for i, v in enumerate(values) if type(v) is t), None)
    array = np.asarray(values, dtype=np.float64) if bad is None else None
    if array is not None:
        wrong = np.isnan(array) if kind == "run" else ~np.isfinite(array) | (array != np.floor(array))
        bad = int(np.flatnonzero(wrong)[0]) if wrong.any() else None
    if bad is not None:
        doc, value = docs[bad], values[bad]
        found = f"the document id {doc!r}" if not isinstance(doc, str) else (
            f"document {doc!r} has {quote(value) if isinstance(value, str) else repr(value)}")
        raise InputError(f"{found}; {expected}", source=source, column=qids[bad], column_label="query")
    return codes.encode(pa.array(qids, pa.string())), array, pa.array(docs, pa.string())


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

    def finish(self) -> tuple[np.ndarray, pa.Array, np.ndarray]:
        """(codes, docids, compared scores) of the kept rows in trec_eval order, `keep` per query
        at most."""
        codes, compared, docids = self._joined()
        table = pa.table({"code": codes, "score": compared, "docid": docids})
        order = pc.sort_indices(
            table, sort_keys=[("code", "ascending"), ("score", "descending"), ("docid", "descending")]
        ).to_numpy()
        codes = codes[order]
        within = _ranks_in_groups(codes) < self.keep
        return codes[within], docids.take(pa.array(order[within])), compared[order[within]]


def _compared(scores: np.ndarray, precision: str) -> np.ndarray:
    """Scores as ranking compares them (float32 roundings, or doubles); -0.0 made 0.0."""
    scores = _at_precision(scores, precision)
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


def _duplicate(source: Any, name: str, qid: str, docid: str, tag: str | None = None) -> InputError:
    """The error for a (query, document) pair given twice, naming both lines (found by reading
    the file again: an error path only)."""
    lines = pair_lines(source, name, qid, docid, tag) if tag != "None" else []
    where = f" in run {tag!r}" if tag is not None else ""
    at = f": at line {lines[0]} and at line {lines[1]}" if len(lines) == 2 else ""
    return InputError(
        f"document {docid!r} appears twice for query {qid!r}{where}{at}; expected each (query, document) pair "
        "once (trec_eval refuses duplicates too)",
        source=name, line=lines[1] if len(lines) == 2 else None,
    )
