"""TREC run files and qrels, read the way trec_eval reads them, with clear errors.

Run lines: `qid Q0 docid rank score tag` (6 fields separated by spaces or tabs). As trec_eval
does, fields after the sixth are ignored (with a note in `Run.notes`: trec_eval's own
`results.trunc` has them). The tag names the run: one file may hold several runs, and several
files may be loaded at once. A tag that several files share, and the tag `None` (ranx saves an
unnamed run so), are replaced by the file's name (its stem; `stem:tag` when the file holds
several runs), with a note. As in trec_eval, the `Q0` and `rank` fields do not order anything: a
query's ranking is by score descending, ties broken by document id descending (`Run.ranking`,
the shared `rank_by_trec_eval`). `rank` must still be an integer, which catches swapped columns.

Qrels lines: `qid iter docid rel` (4 fields); `rel` is an integer grade (0 = not relevant).

JSON (ranx `Run.save("run.json")` / `Qrels.save`, pytrec_eval's dicts): a file whose content
starts with `{` is one object `{qid: {docid: score}}` (a run, named from the file) or
`{qid: {docid: grade}}` (qrels, integer grades).

Blank lines and lines starting with `#` are skipped; gzip files are read transparently (by
content, whatever the name). A (qid, docid) pair twice in one run or in the qrels is an error
naming both lines, as trec_eval refuses it too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from tempo_eval.io._source import decode_text, gunzip_if_needed, read_input
from tempo_eval.io.errors import InputError, parse_json_document, quote

RUN_FIELDS = ("qid", "Q0", "docid", "rank", "score", "tag")
QRELS_FIELDS = ("qid", "iter", "docid", "rel")
_RUN_EXPECTED = "expected 6 fields separated by spaces or tabs: qid Q0 docid rank score tag"
_QRELS_EXPECTED = "expected 4 fields separated by spaces or tabs: qid iter docid rel"
#: what trec_eval reads as an integer (rank, relevance) and as a score: ASCII digits only, so
#: Python's `int("1_0")` or Arabic-Indic digits do not slip through
ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
ASCII_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?i:inf|infinity)")


def ascii_integer(text: str) -> int | None:
    """The integer in `text` when it is ASCII digits with an optional sign, else None."""
    return int(text) if ASCII_INTEGER.fullmatch(text) else None


def ascii_score(text: str) -> float | None:
    """The number in `text` when it is an ASCII decimal (optional exponent, or inf), else None."""
    return float(text) if ASCII_DECIMAL.fullmatch(text) else None


@dataclass
class Run:
    """One retrieval run: for each query id, each retrieved document's score."""

    name: str
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    #: what was read leniently (fields after the sixth, a name taken from the file name)
    notes: list[str] = field(default_factory=list)

    def ranking(self, qid: str, *, precision: str | None = None) -> list[str]:
        """Document ids of `qid` best first: score descending, then document id descending
        (trec_eval's tie rule; scores compared at `precision`, see `tempo_eval.core.ranking`).
        A query the run does not contain has an empty ranking."""
        from tempo_eval.core.ranking import DEFAULT_SCORE_PRECISION, rank_by_trec_eval

        return rank_by_trec_eval(self.scores.get(qid, {}), precision=precision or DEFAULT_SCORE_PRECISION)

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

    Each item is a path, bytes or a binary file-like object with a `.name`, holding TREC lines or
    a JSON run. A tag used in several files, and the tag "None", give way to the file's name
    (see the module doc); a malformed line raises InputError, and so does a file over
    `max_bytes` (default: the input size limit, `tempo_eval.io._source.max_input_bytes`).
    """
    sources = list(path_or_paths) if isinstance(path_or_paths, (list, tuple)) else [path_or_paths]
    if not sources:
        raise InputError("no run files given; expected at least one TREC run file")
    parsed: list[tuple[str, dict[str, Run]]] = []
    for item in sources:
        raw = read_input(item, default_name="run", max_bytes=max_bytes)
        text = _text(raw)
        if text.lstrip().startswith("{"):
            run = Run(_stem(raw.name), _json_mapping(text, raw.name, "run"))
            run.notes.append(f"{raw.name}: a JSON run (ranx / pytrec_eval); named {run.name!r} from the file name")
            parsed.append((raw.name, {run.name: run}))
        else:
            parsed.append((raw.name, _parse_run(text, raw.name)))
    names = assign_run_names([(source, list(runs_in_file)) for source, runs_in_file in parsed])
    runs: dict[str, Run] = {}
    for index, (_, runs_in_file) in enumerate(parsed):
        for tag, run in runs_in_file.items():
            run.name, notes = names[index, tag]
            run.notes.extend(notes)
            runs[run.name] = run
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


def _json_mapping(text: str, source: str, kind: str) -> dict[str, dict[str, Any]]:
    """{qid: {docid: value}} from a ranx / pytrec_eval JSON file; integer grades for qrels."""
    expected = (
        'expected {"query id": {"doc id": score, ...}, ...} (a ranx or pytrec_eval run)' if kind == "run"
        else 'expected {"query id": {"doc id": grade, ...}, ...} with integer grades (ranx or pytrec_eval qrels)'
    )
    document = parse_json_document(text, source, expected)
    if not isinstance(document, dict) or not document:
        raise InputError(f"found no queries; {expected}", source=source)
    out: dict[str, dict[str, Any]] = {}
    for qid, docs in document.items():
        if not isinstance(docs, dict):
            raise InputError(
                f"query {qid!r} holds {type(docs).__name__}; {expected}", source=source, column=str(qid),
                column_label="query",
            )
        values: dict[str, Any] = {}
        for doc, value in docs.items():
            ok = (
                isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
                if kind == "run"
                else isinstance(value, int) and not isinstance(value, bool)
                or isinstance(value, float) and value.is_integer()
            )
            if not ok:
                raise InputError(
                    f"document {doc!r} has {quote(value) if isinstance(value, str) else repr(value)}; {expected}",
                    source=source, column=str(qid), column_label="query",
                )
            values[str(doc)] = float(value) if kind == "run" else int(value)
        out[str(qid)] = values
    return out


def load_qrels(path: Any, *, max_bytes: int | None = None) -> Qrels:
    """Qrels from a path, bytes or a binary file-like object; raises InputError when malformed
    or over `max_bytes` (default: the input size limit)."""
    raw = read_input(path, default_name="qrels", max_bytes=max_bytes)
    source = raw.name
    text = _text(raw)
    if text.lstrip().startswith("{"):
        return Qrels(source, _json_mapping(text, source, "qrels"))
    judgments: dict[str, dict[str, int]] = {}
    lines = _lines(text)
    for number, fields in lines:
        qid, docid, grade = qrels_line(fields, source, number)
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


def run_line(fields: list[str], source: str, number: int) -> tuple[str, str, float, str]:
    """(qid, docid, score, tag) of one run line split on whitespace; InputError naming the line
    and field when it is not `qid Q0 docid rank score tag` (fields after the sixth are the
    caller's to note)."""
    if len(fields) < 6:
        raise InputError(
            f"found {len(fields)} fields {quote(' '.join(fields))}; {_RUN_EXPECTED}{_run_hint(fields)}",
            source=source,
            line=number,
        )
    qid, _, docid, rank, score_text, tag = fields[:6]
    if ascii_integer(rank) is None:
        raise InputError(
            f"found {rank!r}; expected an integer rank in ASCII digits (the 4th field: qid Q0 docid rank score tag)",
            source=source, line=number, column="rank", column_label="field",
        )
    score = ascii_score(score_text)
    if score is None:
        raise InputError(
            f"found {score_text!r}; expected a number as the score, in ASCII digits (the 5th field: "
            "qid Q0 docid rank score tag)",
            source=source, line=number, column="score", column_label="field",
        )
    return qid, docid, score, tag


def qrels_line(fields: list[str], source: str, number: int) -> tuple[str, str, int]:
    """(qid, docid, grade) of one qrels line split on whitespace; InputError naming the line and
    field when it is not `qid iter docid rel`."""
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
    grade = ascii_integer(rel)
    if grade is None:
        raise InputError(
            f"found {rel!r}; expected an integer relevance grade in ASCII digits (0 = not relevant)",
            source=source, line=number, column="rel", column_label="field",
        )
    return qid, docid, grade


def _parse_run(text: str, source: str) -> dict[str, Run]:
    runs: dict[str, Run] = {}
    lines = _lines(text)
    extra_lines: list[int] = []
    for number, fields in lines:
        if len(fields) > 6:
            extra_lines.append(number)  # trec_eval reads six fields and ignores the rest of the line
        qid, docid, score, tag = run_line(fields, source, number)
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
    if extra_lines:
        note = (
            f"{source}: {len(extra_lines)} line(s) have more than 6 fields (first at line {extra_lines[0]}); "
            "the fields after the tag are ignored, as trec_eval does"
        )
        for run in runs.values():
            run.notes.append(note)
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
        if fields[0] == qid and fields[2] == docid and (tag is None or fields[5:6] == [tag]):
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
