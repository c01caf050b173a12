"""Retriever runs as a dataset: TREC run files + qrels (+ query texts, + a corpus) -> canonical rows.

One row per (run, query): `run`, `query_id`, `retrieved_ids` (ranked as trec_eval ranks: score
descending, then document id descending), `gold_ids` (the graded qrels of the query, grade > 0),
and when given, `query` (joined by query id from a dataset file) and `contexts` (the corpus texts
of the retrieved documents, aligned with `retrieved_ids`; "" for a document not in the corpus).

The runs and the qrels are read by `tempo_eval.io.trec_stream`, as the command line reads them;
the Dataset keeps the qrels file as given (`Dataset.qrels`), which the store keeps with the
dataset, so its systems compare on every judged query (`tempo_eval.compare.trec_scores.score_dataset_runs`).
`frame_runs` and `frame_qrels` turn a stored dataset's rows back into the reader's columns.
The corpus reader lives here until `tempo_eval.io` has one.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonlines import json_lines

#: accepted names for the id and text fields of a corpus record
_ID_FIELDS = ("doc_id", "docid", "id", "_id")
_TEXT_FIELDS = ("text", "contents", "body", "passage")


def load_corpus(data: bytes, name: str = "corpus.jsonl") -> dict[str, str]:
    """doc id -> text from JSONL records ({"doc_id": ..., "text": ...}; also id/_id/docid and
    contents/body/passage, with an optional "title" put before the text) or TSV lines
    `doc_id<TAB>text`. Raises InputError naming the line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"the corpus is not UTF-8 text (byte {exc.start}); save it as UTF-8", source=name) from None
    corpus: dict[str, str] = {}
    is_tsv = name.lower().endswith((".tsv", ".tab", ".txt"))
    for number, line in json_lines(text):
        if is_tsv:
            doc_id, sep, body = line.partition("\t")
            if not sep:
                raise InputError("expected 'doc_id<TAB>text'", source=name, line=number)
            corpus[doc_id.strip()] = body.strip()
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", source=name, line=number) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object per line", source=name, line=number)
        doc_id = next((record[f] for f in _ID_FIELDS if f in record), None)
        body = next((record[f] for f in _TEXT_FIELDS if f in record), None)
        if doc_id is None or not isinstance(body, str):
            raise InputError(
                f"expected a document id ({', '.join(_ID_FIELDS)}) and a text ({', '.join(_TEXT_FIELDS)})",
                source=name, line=number,
            )
        title = record.get("title")
        corpus[str(doc_id)] = f"{title}. {body}" if isinstance(title, str) and title else body
    if not corpus:
        raise InputError("the corpus holds no document", source=name)
    return corpus


def corpus_texts(path: Any, doc_ids: Sequence[str], *, chunk_bytes: int = 1 << 24) -> dict[str, str]:
    """doc id -> text for only `doc_ids`, from a corpus file (the formats of `load_corpus`) read
    as a stream: a regular expression of the wanted ids finds the candidate lines at C speed, and
    only those are parsed; reading stops once every id is found. For large corpora, where only
    the documents of the queries a user opens are shown."""
    import re
    from pathlib import Path

    wanted = {str(d) for d in doc_ids}
    if not wanted:
        return {}
    name = Path(str(path)).name
    alternatives = b"|".join(re.escape(d.encode("utf-8")) for d in sorted(wanted, key=len, reverse=True))
    # an id as a field: after a quote, a tab, ": " or the line start; before a quote, tab, "," or "}"
    pattern = re.compile(rb'(?:^|(?<=["\t])|(?<=: ))(?:' + alternatives + rb')(?=["\t,}])', re.MULTILINE)
    found: dict[str, str] = {}
    rest = b""
    from tempo_eval.io._source import open_regular_file

    # a regular file, opened without following links and, inside `reads_confined_to`, confined to
    # the allowed folders where it is opened (the Compare page's typed corpus path)
    with open_regular_file(path, name) as handle:
        while wanted - found.keys():
            chunk = handle.read(chunk_bytes)
            data = rest + chunk
            cut = data.rfind(b"\n") + 1 if chunk else len(data)
            data, rest = data[:cut], data[cut:]
            for match in pattern.finditer(data):
                start = data.rfind(b"\n", 0, match.start()) + 1
                end = data.find(b"\n", match.end())
                line = data[start:end if end >= 0 else len(data)]
                try:
                    parsed = load_corpus(line, name)
                except InputError:
                    continue  # the id appears inside another record's text
                found.update((d, t) for d, t in parsed.items() if d in wanted)
            if not chunk:
                break
    return found


def load_runs_dataset(
    runs: Sequence[tuple[str, Any]],
    qrels: tuple[str, Any],
    *,
    queries: tuple[str, Any] | None = None,
    corpus: tuple[str, Any] | None = None,
    name: str | None = None,
) -> Any:
    """A `tempo_eval.io` Dataset holding every run's ranking of every query (see the module
    docstring), its `qrels` the judgements file as given (every judged query, zero grades too,
    for the comparison of its systems). `runs` are (file name, bytes or path) pairs; a file may
    hold several run tags. Runs and qrels are read by `tempo_eval.io.trec_stream`, the reader of
    the command line: TREC lines without a size limit, JSON up to the input limit."""
    from tempo_eval.io.dataset import Dataset, load_dataset
    from tempo_eval.io.trec_stream import QueryCodes, read_qrels, read_runs

    if not runs:
        raise InputError("give at least one run file", source="runs")
    parts = [(file_name, _bytes(data)) for file_name, data in runs]
    qrels_bytes = _bytes(qrels[1])
    codes = QueryCodes()
    judgments = read_qrels(_named(qrels[0], qrels_bytes), codes)
    loaded = read_runs([_named(file_name, data) for file_name, data in parts], codes, keep=WHOLE_RANKING)
    relevant = judgments.grades > 0
    gold: dict[int, dict[str, int]] = {}
    for code, doc, grade in zip(judgments.codes[relevant].tolist(), judgments.docids.filter(pa.array(relevant)).to_pylist(),
                                judgments.grades[relevant].tolist(), strict=True):
        gold.setdefault(code, {})[doc] = int(grade)
    texts: dict[str, str] = {}
    if queries is not None:
        query_frame = load_dataset(_bytes(queries[1]), name=queries[0]).frame
        if "query" in query_frame.columns:
            texts = {str(q): t for q, t in zip(query_frame["query_id"], query_frame["query"], strict=True) if isinstance(t, str)}
    documents = load_corpus(_bytes(corpus[1]), corpus[0]) if corpus is not None else None

    rows = []
    warnings: list[str] = list(dict.fromkeys(note for run in loaded.values() for note in run.notes))
    judged = judgments.judged_codes()
    for run_name, run in loaded.items():
        missing = judged[~np.isin(judged, run.query_codes())]
        if len(missing):
            warnings.append(f"run {run_name!r} has no ranking for {len(missing)} judged queries "
                            f"(e.g. {codes.ids[int(missing[0])]})")
        starts = np.flatnonzero(run.positions() == 0)  # each query's first row
        bounds = np.r_[starts, len(run.codes)]
        docids = run.docids.to_pylist()
        ranked_queries = [(codes.ids[int(run.codes[s])], int(run.codes[s]), s, e)
                          for s, e in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)]
        for query_id, code, first, last in sorted(ranked_queries, key=lambda q: _natural(q[0])):
            ranked = docids[first:last]
            row: dict[str, Any] = {"query_id": query_id, "run": run_name, "retrieved_ids": ranked,
                                   "gold_ids": dict(gold[code]) if code in gold else None}
            if texts:
                row["query"] = texts.get(query_id)
            if documents is not None:
                row["contexts"] = [documents.get(d, "") for d in ranked]
            rows.append(row)
    if documents is not None:
        unknown = {d for row in rows for d in row["retrieved_ids"] if d not in documents}
        if unknown:
            warnings.append(f"{len(unknown)} retrieved documents are not in the corpus (e.g. {sorted(unknown)[0]})")
    columns = ["query_id", "query", "contexts", "retrieved_ids", "gold_ids", "run"]
    frame = pd.DataFrame(rows, columns=[c for c in columns if any(c in r for r in rows)], dtype=object)
    digest = hashlib.sha256()
    for part in [*parts, (qrels[0], qrels_bytes), *((p[0], _bytes(p[1])) for p in (queries, corpus) if p is not None)]:
        digest.update(part[0].encode("utf-8") + b"\0" + hashlib.sha256(part[1]).digest())
    return Dataset(
        frame=frame,
        name=name or " vs ".join(loaded),
        mapping={}, content_hash=digest.hexdigest(),
        source_format="trec",
        warnings=warnings, qrels=qrels_bytes,
    )


#: `read_runs`' keep for a dataset: every retrieved document of every query
WHOLE_RANKING = 2**62


def _bytes(data: Any) -> bytes:
    """An upload's bytes, or the bytes of the file at a path."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    from pathlib import Path

    return Path(data).read_bytes()


def _named(name: str, data: bytes) -> io.BytesIO:
    """Bytes with a file name, as the loaders read uploads (the name appears in messages)."""
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def _natural(query_id: str) -> tuple[Any, ...]:
    """q2 before q10."""
    import re

    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(query_id)))


# ---- a dataset's systems as runs and qrels (for the comparison) -----------------------------

def systems(frame: pd.DataFrame) -> list[str]:
    """The run names of a dataset in order of appearance ([] when it has no `run` column)."""
    if "run" not in frame.columns:
        return []
    return [str(r) for r in dict.fromkeys(frame["run"].dropna())]


def frame_runs(frame: pd.DataFrame, codes: Any) -> dict[str, Any]:
    """The dataset's systems as runs of `tempo_eval.io.trec_stream` (`TopRun`, keyed by the `run`
    column, "dataset" without one): each row's `retrieved_ids` in their order (ranked by
    trec_eval's rule when read from run files), a document listed twice counted at its first
    place. `codes` is the `QueryCodes` the qrels share."""
    from tempo_eval.io.trec_stream import TopRun

    by_run: dict[str, tuple[list[int], list[str]]] = {}
    seen: set[tuple[str, str]] = set()
    if "retrieved_ids" not in frame.columns:
        return {}
    names = frame["run"] if "run" in frame.columns else pd.Series(["dataset"] * len(frame), index=frame.index)
    for system, query_id, ranked in zip(names, frame["query_id"], frame["retrieved_ids"], strict=True):
        if not isinstance(ranked, (list, tuple)) or system is None:
            continue
        if (str(system), str(query_id)) in seen:
            continue  # a query ranked twice by one system: its first row, as trec_eval takes a ranking once
        seen.add((str(system), str(query_id)))
        query_codes, docids = by_run.setdefault(str(system), ([], []))
        code = codes.code(str(query_id))
        kept = [str(d) for d in dict.fromkeys(str(d) for d in ranked)]
        query_codes.extend([code] * len(kept))
        docids.extend(kept)
    runs = {}
    for name, (query_codes, docids) in by_run.items():
        order = np.argsort(np.asarray(query_codes, dtype=np.int32), kind="stable")
        runs[name] = TopRun(name, np.asarray(query_codes, dtype=np.int32)[order],
                            pa.array(docids, pa.string()).take(pa.array(order)), source="dataset", tag=name)
    return runs


def frame_qrels(frame: pd.DataFrame, codes: Any) -> Any:
    """The judgements a dataset's `gold_ids` column holds (a list means grade 1), as
    `tempo_eval.io.trec_stream.QrelsColumns`: for a dataset stored without its qrels file."""
    from tempo_eval.io.trec_stream import QrelsColumns

    grades: dict[tuple[str, str], int] = {}
    if "gold_ids" in frame.columns:
        for query_id, gold in zip(frame["query_id"], frame["gold_ids"], strict=True):
            if isinstance(gold, Mapping):
                grades.update(((str(query_id), str(d)), int(g)) for d, g in gold.items())
            elif isinstance(gold, (list, tuple)):
                grades.update(((str(query_id), str(d)), 1) for d in gold)
    return QrelsColumns("gold_ids", np.fromiter((codes.code(q) for q, _ in grades), np.int32, len(grades)),
                        pa.array([d for _, d in grades], pa.string()), np.fromiter(grades.values(), np.int64, len(grades)))
