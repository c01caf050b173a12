"""Retriever runs as a dataset: TREC run files + qrels (+ query texts, + a corpus) -> canonical rows.

One row per (run, query): `run`, `query_id`, `retrieved_ids` (ranked as trec_eval ranks: score
descending, then document id descending), `gold_ids` (the graded qrels of the query, grade > 0),
and when given, `query` (joined by query id from a dataset file) and `contexts` (the corpus texts
of the retrieved documents, aligned with `retrieved_ids`; "" for a document not in the corpus).

No streamlit here: the Datasets page and the tests call it the same way. The corpus reader lives
here until `tempo_eval.io` has one.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

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
    with open(path, "rb") as handle:
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
    runs: Sequence[tuple[str, bytes]],
    qrels: tuple[str, bytes],
    *,
    queries: tuple[str, bytes] | None = None,
    corpus: tuple[str, bytes] | None = None,
    name: str | None = None,
) -> Any:
    """A `tempo_eval.io` Dataset holding every run's ranking of every query (see the module
    docstring). `runs` are (file name, bytes) pairs; a file may hold several run tags."""
    from tempo_eval.io.dataset import Dataset, load_dataset
    from tempo_eval.io.trec import load_qrels, load_run
    from tempo_eval.metrics.ndcg import rank_by_trec_eval

    if not runs:
        raise InputError("give at least one run file", source="runs")
    loaded = load_run([_named(file_name, data) for file_name, data in runs])
    judgments = _judgments(load_qrels(_named(*qrels)))
    texts: dict[str, str] = {}
    if queries is not None:
        query_frame = load_dataset(queries[1], name=queries[0]).frame
        if "query" in query_frame.columns:
            texts = {str(q): t for q, t in zip(query_frame["query_id"], query_frame["query"], strict=True) if isinstance(t, str)}
    documents = load_corpus(corpus[1], corpus[0]) if corpus is not None else None

    rows = []
    warnings: list[str] = []
    for run_name, run in loaded.items():
        scores = getattr(run, "scores", run)
        missing = sorted(set(judgments) - set(scores))
        if missing:
            warnings.append(f"run {run_name!r} has no ranking for {len(missing)} judged queries (e.g. {missing[0]})")
        for query_id in sorted(scores, key=_natural):
            ranked = rank_by_trec_eval(scores[query_id])
            row: dict[str, Any] = {
                "query_id": str(query_id),
                "run": run_name,
                "retrieved_ids": ranked,
                "gold_ids": {d: int(g) for d, g in judgments.get(query_id, {}).items() if g > 0} or None,
            }
            if texts:
                row["query"] = texts.get(str(query_id))
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
    for part in [*runs, qrels, *(p for p in (queries, corpus) if p is not None)]:
        digest.update(part[0].encode("utf-8") + b"\0" + hashlib.sha256(part[1]).digest())
    return Dataset(
        frame=frame,
        name=name or " vs ".join(loaded),
        mapping={},
        content_hash=digest.hexdigest(),
        source_format="trec",
        warnings=warnings,
    )


def _named(name: str, data: bytes) -> io.BytesIO:
    """Bytes with a file name, as the loaders read uploads (the name appears in messages)."""
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def _judgments(qrels: Any) -> dict[str, dict[str, float]]:
    judged = getattr(qrels, "judgments", qrels)
    return {str(q): {str(d): float(g) for d, g in docs.items()} for q, docs in judged.items()}


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


def system_rankings(frame: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """{system: {query_id: {doc_id: score}}} with scores that reproduce each row's order.

    Duplicated ids count at their first position (the gold-mode rule).
    """
    out: dict[str, dict[str, dict[str, float]]] = {}
    if "retrieved_ids" not in frame.columns:
        return out
    names = frame["run"] if "run" in frame.columns else pd.Series(["dataset"] * len(frame))
    for system, query_id, ranked in zip(names, frame["query_id"], frame["retrieved_ids"], strict=True):
        if not isinstance(ranked, (list, tuple)) or system is None:
            continue
        scores: dict[str, float] = {}
        for position, doc in enumerate(ranked):
            scores.setdefault(str(doc), float(len(ranked) - position))
        out.setdefault(str(system), {})[str(query_id)] = scores
    return out


def qrels_from_frame(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """{query_id: {doc_id: grade}} from the gold_ids column (a list means grade 1)."""
    qrels: dict[str, dict[str, float]] = {}
    if "gold_ids" not in frame.columns:
        return qrels
    for query_id, gold in zip(frame["query_id"], frame["gold_ids"], strict=True):
        if isinstance(gold, Mapping):
            grades = {str(d): float(g) for d, g in gold.items()}
        elif isinstance(gold, (list, tuple)):
            grades = {str(d): 1.0 for d in gold}
        else:
            continue
        qrels.setdefault(str(query_id), {}).update(grades)
    return qrels
