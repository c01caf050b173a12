"""TREC run files and qrels, read the way trec_eval reads them, with clear errors.

Run lines: `qid Q0 docid rank score tag` (6 fields separated by spaces or tabs). The tag names
the run: one file may hold several runs, and several files may be loaded at once. As in
trec_eval, the `Q0` and `rank` fields do not order anything: a query's ranking is by score
descending, ties broken by document id descending (`Run.ranking`, the shared
`rank_by_trec_eval`). `rank` must still be an integer, which catches swapped columns.

Qrels lines: `qid iter docid rel` (4 fields); `rel` is an integer grade (0 = not relevant).

Blank lines and lines starting with `#` are skipped; gzip files are read transparently (by
content, whatever the name). A (qid, docid) pair twice in one run or in the qrels is an error
naming both lines, as trec_eval refuses it too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from tempo_eval.io._source import decode_text, gunzip_if_needed, read_input
from tempo_eval.io.errors import InputError, quote

RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docid", "rel")
_RUN_EXPECTED = "expected 6 fields separated by spaces or tabs: qid Q0 docid rank score tag"
_QRELS_EXPECTED = "expected 4 fields separated by spaces or tabs: qid iter docid rel"


@dataclass
class Run:
    """One retrieval run: for each query id, each retrieved document's score."""

    name: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)

    def ranking(self, qid: str) -> list[str]:
        """Document ids of `qid` best first: score descending, then document id descending
        (trec_eval's tie rule). A query the run does not contain has an empty ranking."""
        from tempo_eval.metrics.ndcg import rank_by_trec_eval

        return rank_by_trec_eval(self.scores.get(qid, {}))

    def query_ids(self) -> list[str]:
        """The run's query ids in the order they first appear in the file."""
        return list(self.scores)


@dataclass
class Qrels:
    """Relevance judgements: for each query id, each judged document's integer grade."""

    name: str
    judgments: dict[str, dict[str, int]] = field(default_factory=dict)

    def query_ids(self) -> list[str]:
        return list(self.judgments)


def load_run(path_or_paths: Any, *, max_bytes: int | None = None) -> dict[str, Run]:
    """Runs keyed by name (the tag column) from one run file or a list of them.

    Each item is a path, bytes or a binary file-like object with a `.name`. A run name found in
    two different files raises InputError, as does any malformed line, and so does a file over
    `max_bytes` (default: the input size limit, `tempo_eval.io._source.max_input_bytes`).
    """
    sources = list(path_or_paths) if isinstance(path_or_paths, (list, tuple)) else [path_or_paths]
    if not sources:
        raise InputError("no run files given; expected at least one TREC run file")
    runs: dict[str, Run] = {}
    origin: dict[str, str] = {}
    for item in sources:
        raw = read_input(item, default_name="run", max_bytes=max_bytes)
        for name, run in _parse_run(_text(raw), raw.name).items():
            if name in runs:
                raise InputError(
                    f"the run name {name!r} (the tag column) is also used in {origin[name]}; expected "
                    "each run name once: give one of the runs another tag",
                    source=raw.name,
                )
            runs[name] = run
            origin[name] = raw.name
    return runs


def load_qrels(path: Any, *, max_bytes: int | None = None) -> Qrels:
    """Qrels from a path, bytes or a binary file-like object; raises InputError when malformed
    or over `max_bytes` (default: the input size limit)."""
    raw = read_input(path, default_name="qrels", max_bytes=max_bytes)
    source = raw.name
    judgments: dict[str, dict[str, int]] = {}
    lines = _lines(_text(raw))
    for number, fields in lines:
        if len(fields) != 4:
            hint = ""
            if len(fields) == 6:
                hint = " (this looks like a run line: load it with load_run)"
            raise InputError(
                f"found {len(fields)} fields {quote(' '.join(fields))}; {_QRELS_EXPECTED}{hint}",
                source=source,
                line=number,
            )
        qid, _, docid, rel = fields
        try:
            grade = int(rel)
        except ValueError:
            raise InputError(
                f"found {rel!r}; expected an integer relevance grade (0 = not relevant)",
                source=source, line=number, column="rel", column_label="field",
            ) from None
        judged = judgments.setdefault(qid, {})
        if docid in judged:
            raise _duplicate(source, qid, docid, number, _first_line(lines, qid, docid))
        judged[docid] = grade
    if not judgments:
        raise InputError(f"no judgements found (the file is empty or only comments); {_QRELS_EXPECTED}", source=source)
    return Qrels(source, judgments)


def _text(raw: Any) -> str:
    # a run has nowhere to show warnings; a byte order mark is harmless here
    return decode_text(gunzip_if_needed(raw), raw.name, [])


def _lines(text: str) -> Sequence[tuple[int, list[str]]]:
    return list(_split_lines(text))


def _split_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            yield number, fields


def _parse_run(text: str, source: str) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    lines = _lines(text)
    for number, fields in lines:
        if len(fields) != 6:
            raise InputError(
                f"found {len(fields)} fields {quote(' '.join(fields))}; {_RUN_EXPECTED}{_run_hint(fields)}",
                source=source,
                line=number,
            )
        qid, _, docid, rank, score_text, tag = fields
        try:
            int(rank)
        except ValueError:
            raise InputError(
                f"found {rank!r}; expected an integer rank (the 4th field: qid Q0 docid rank score tag)",
                source=source, line=number, column="rank", column_label="field",
            ) from None
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if math.isnan(score):
            raise InputError(
                f"found {score_text!r}; expected a number as the score (the 5th field: qid Q0 docid rank score tag)",
                source=source, line=number, column="score", column_label="field",
            )
        run = runs.get(tag)
        if run is None:
            run = runs[tag] = Run(tag)
        per_query = run.scores.setdefault(qid, {})
        if docid in per_query:
            first = _first_line(lines, qid, docid, tag)
            raise _duplicate(source, qid, docid, number, first, run=tag)
        per_query[docid] = score
    if not runs:
        raise InputError(f"no run lines found (the file is empty or only comments); {_RUN_EXPECTED}", source=source)
    return runs


def _run_hint(fields: list[str]) -> str:
    if len(fields) == 4:
        return " (this looks like a qrels line: load it with load_qrels)"
    if len(fields) == 5:
        return " (is the Q0 field or the run tag missing?)"
    return ""


def _first_line(
    lines: Sequence[tuple[int, list[str]]], qid: str, docid: str, tag: str | None = None
) -> int:
    # Only called on an error: find where the pair was seen first (in the same run, for runs).
    for number, fields in lines:
        if fields[0] == qid and fields[2] == docid and (tag is None or fields[-1] == tag):
            return number
    return 0  # pragma: no cover - the pair was seen, so it is found


def _duplicate(source: str, qid: str, docid: str, line: int, first: int, run: str | None = None) -> InputError:
    where = f" in run {run!r}" if run is not None else ""
    return InputError(
        f"document {docid!r} appears twice for query {qid!r}{where}: at line {first} and at line {line}; "
        "expected each (query, document) pair once (trec_eval refuses duplicates too)",
        source=source,
        line=line,
    )
