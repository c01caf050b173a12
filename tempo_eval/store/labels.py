"""Human labels of claim verdicts, stored in the workspace database (table `claim_labels`).

A label is keyed by the claim text, a hash of the premises it was checked against and its
reviewer, never by a run: the same claim against the same premises in a later run finds its
labels again, and each reviewer's label is kept apart (reviewer '': labels given before
reviewers were recorded, shown as "unknown"). Labels export to and import from CSV or JSONL
(columns `claim`, `premises_hash`, `label`, `note`, optional `reviewer` and `premises`, a JSON
list of strings); a file without `reviewer` imports as the importing user's. The CSV gets the
formula guard of every export (`tempo_eval.io.export.to_csv_text`), which its import removes, so
an exported file imports back unchanged.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from tempo_eval.common.identity import user_name
from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonlines import read_json_lines
from tempo_eval.store.db import connect, json_or

#: what a human may say about a claim (the verifiers' three-way scale)
LABELS = ("SUPPORTED", "NEUTRAL", "CONTRADICTED")
LABEL_COLUMNS = ["claim", "premises_hash", "reviewer", "label", "note", "premises", "labelled_at"]
#: the labels' upsert: a reviewer's new label of a (claim, premises) replaces their old one
_UPSERT = (
    "INSERT INTO claim_labels (claim, premises_hash, reviewer, label, note, premises, labelled_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (claim, premises_hash, reviewer) DO UPDATE SET"
    " label = excluded.label, note = excluded.note, premises = excluded.premises, labelled_at = excluded.labelled_at"
)
#: a premises hash: sha256 as 64 lower-case hex digits
_DIGEST = re.compile(r"[0-9a-f]{64}")


def premises_hash(premises: Sequence[str]) -> str:
    """sha256 of the premises as a JSON list (order and exact text matter)."""
    return hashlib.sha256(json.dumps(list(premises), ensure_ascii=False).encode("utf-8")).hexdigest()


def claim_premises(metric: str, claim: Mapping[str, Any], row: Mapping[str, Any]) -> list[str] | None:
    """The premises a stored claim of `metric` was verified against, rebuilt from its dataset row:
    Factual Correctness checks answer claims against the reference and reference claims against
    the answer; Temporal Faithfulness checks answer claims against the contexts. None when unknown."""

    def text(name: str) -> str | None:
        value = row.get(name)
        return value if isinstance(value, str) else None

    if metric == "factual_correctness":
        side = claim.get("side")
        premise = text("reference") if side == "response" else text("answer") if side == "reference" else None
        return None if premise is None else [premise]
    if metric == "temporal_faithfulness":
        contexts = row.get("contexts")
        if isinstance(contexts, (list, tuple)) and all(isinstance(c, str) for c in contexts):
            return list(contexts)
    return None


class LabelStore:
    """Read and write human labels in the workspace database (or the file at `path`)."""

    def __init__(self, path: Any = None) -> None:
        self._conn = connect(path)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    def set_label(self, claim: str, premises: Sequence[str], label: str, note: str = "", *,
                  user: str | None = None) -> None:
        """Store (or replace) `user`'s human label of `claim` against `premises` (None: the
        unknown reviewer); other reviewers' labels of the claim stay as they are."""
        label = _check_label(label)
        with self._lock, self._conn:
            self._conn.execute(_UPSERT, (claim, premises_hash(premises), _reviewer(user), label, note or "",
                                         json.dumps(list(premises), ensure_ascii=False), _now()))

    def remove(self, claim: str, premises_digest: str, *, user: str | None = None) -> None:
        """Remove `user`'s label of the claim (None: the unknown reviewer's); others' stay."""
        with self._lock, self._conn:
            self._conn.execute(
                "DELETE FROM claim_labels WHERE claim = ? AND premises_hash = ? AND reviewer = ?",
                (claim, premises_digest, _reviewer(user)),
            )

    def lookup(self, keys: Iterable[tuple[str, str]], *, user: str | None = None) -> dict[tuple[str, str], str]:
        """(claim, premises hash) -> `user`'s label (None: the unknown reviewer's), for the keys
        they labelled."""
        reviewer = _reviewer(user)
        found = self.reviews(keys)
        return {(c, h): label for c, h, r, label in found.itertuples(index=False) if r == reviewer}

    def reviews(self, keys: Iterable[tuple[str, str]]) -> pd.DataFrame:
        """Every reviewer's label of the (claim, premises hash) keys: columns claim, premises_hash,
        reviewer ('' unknown), label, one row per (key, reviewer)."""
        wanted = set(keys)
        columns = ["claim", "premises_hash", "reviewer", "label"]
        if not wanted:
            return pd.DataFrame(columns=columns)
        with self._lock:
            rows = self._conn.execute(f"SELECT {', '.join(columns)} FROM claim_labels").fetchall()
        return pd.DataFrame([tuple(r) for r in rows if (r[0], r[1]) in wanted], columns=columns)

    def frame(self) -> pd.DataFrame:
        """Every label, newest first."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(LABEL_COLUMNS)} FROM claim_labels ORDER BY labelled_at DESC, claim"
            ).fetchall()
        return pd.DataFrame(rows, columns=LABEL_COLUMNS)

    def export(self, fmt: str) -> bytes:
        """All labels as "csv" or "jsonl" bytes."""
        frame = self.frame().drop(columns=["labelled_at"])
        if fmt == "jsonl":
            return "".join(json.dumps({**record, "premises": json_or(record["premises"], None)},
                                      ensure_ascii=False) + "\n"
                           for record in frame.to_dict(orient="records")).encode("utf-8")
        if fmt == "csv":
            from tempo_eval.io.export import to_csv_text

            return to_csv_text(frame).encode("utf-8")
        raise ValueError(f"format must be 'csv' or 'jsonl', got {fmt!r}")

    def import_labels(self, data: bytes, name: str, *, user: str | None = None) -> int:
        """Add the labels of a CSV or JSONL file (by its name's extension); returns how many.

        A row's `reviewer` is kept as the file gives it (an export imports back unchanged); a file
        without that column is `user`'s labels. Nothing is written unless every row is valid; a
        bad row raises InputError naming the file, row and field.
        """
        records = _read_records(data, name)
        rows = []
        now = _now()
        for number, record in enumerate(records, start=1):
            claim, digest, label, note, premises = _label_row(record, name, number)
            reviewer = _reviewer(record["reviewer"]) if isinstance(record.get("reviewer"), str) else _reviewer(user)
            rows.append((claim, digest, reviewer, label, note, premises, now))
        with self._lock, self._conn:
            self._conn.executemany(_UPSERT, rows)
        return len(rows)


def _reviewer(user: str | None) -> str:
    """The reviewer key of `user`'s labels: '' for none (the unknown reviewer)."""
    return user_name(user) or ""


def _now() -> str:
    """The time a label is given: UTC as "YYYY-MM-DD HH:MM:SS" (the format of the labels before)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _check_label(label: str) -> str:
    value = str(label).strip().upper()
    if value not in LABELS:
        raise ValueError(f"label must be one of {', '.join(LABELS)}, got {label!r}")
    return value


def _read_records(data: bytes, name: str) -> list[dict[str, Any]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("the file is not UTF-8 text", source=name) from None
    if name.lower().endswith(".jsonl"):
        expected = "one JSON object per line with claim, premises_hash and label"
        return [record for _, record in read_json_lines(text, name, expected=expected)]
    if name.lower().endswith(".csv"):
        return _csv_records(text, name)
    raise InputError("expected a .csv or .jsonl file of labels", source=name)


def _csv_records(text: str, name: str) -> list[dict[str, Any]]:
    """The rows of a labels CSV, formula guard removed. CR, LF and CRLF all end a record; a quote
    left open (which would swallow the rows after it into one cell) raises InputError naming the
    line where the cell starts."""
    from tempo_eval.io.export import restore_formulas

    # newline="": the csv module sees the file's own line ends (a CR-only file is rows, not one line)
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    start = 1  # the line the record being read starts on
    try:
        missing = [c for c in ("claim", "label") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; expected claim, premises_hash, label, note",
                             source=name)
        records = []
        start = reader.line_num + 1
        for number, record in enumerate(reader, start=1):
            if None in record:
                raise InputError(f"{len(reader.fieldnames or [])} columns in the header but more cells in "
                                 "this row; quote cells holding commas", source=name, row=number, line=start)
            for column, value in record.items():
                if isinstance(value, str) and _swallows_rows(value):
                    raise InputError(
                        "this cell runs over several lines that hold labels: a quote opened here is "
                        'probably not closed, and the rows after it were read into it; close the quote (or write "" for a '
                        "quote inside a quoted cell)", source=name, row=number, line=start, column=column)
            records.append(record)
            start = reader.line_num + 1
    except csv.Error as error:
        raise InputError(f"broken CSV quoting in the record starting here ({error}); close every opened quote "
                         'and write "" for a quote inside a quoted cell', source=name, line=start) from None
    return restore_formulas(pd.DataFrame(records, columns=reader.fieldnames, dtype=object)).to_dict("records")


def _swallows_rows(cell: str) -> bool:
    """True when a cell spans lines and one of them holds a label among comma-separated values:
    the rows after an unclosed quote, read as the cell's text."""
    lines = cell.splitlines()
    return len(lines) > 1 and any(
        field.strip().strip('"').upper() in LABELS for line in lines for field in line.split(",")[1:]
    )


def _label_row(record: Mapping[str, Any], name: str, number: int) -> tuple[str, str, str, str, str | None]:
    claim = record.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        raise InputError("the claim is empty; expected the claim text", source=name, row=number, column="claim")
    premises = record.get("premises")
    if isinstance(premises, str) and premises.strip():
        with contextlib.suppress(ValueError):  # not JSON: refused below, as any other non-list
            premises = json.loads(premises)
    if premises in (None, ""):
        premises = None
    elif not (isinstance(premises, list) and all(isinstance(p, str) for p in premises)):
        raise InputError("expected a JSON list of premise texts", source=name, row=number, column="premises")
    digest = record.get("premises_hash")
    if digest is None or isinstance(digest, str) and not digest.strip():
        if premises is None:
            raise InputError("give premises_hash or premises", source=name, row=number, column="premises_hash")
        digest = premises_hash(premises)
    elif not isinstance(digest, str) or not _DIGEST.fullmatch(digest.strip()):
        raise InputError(f"got {str(digest)[:70]!r}; expected 64 lower-case hex digits (the sha256 of the "
                         "premises), or leave it empty and give premises", source=name, row=number,
                         column="premises_hash")
    elif premises is not None and premises_hash(premises) != digest.strip():
        raise InputError("premises_hash does not match the premises given", source=name, row=number, column="premises_hash")
    try:
        label = _check_label(record.get("label", ""))
    except ValueError:
        raise InputError(
            f"got {str(record.get('label'))[:40]!r}; expected one of {', '.join(LABELS)}", source=name, row=number, column="label"
        ) from None
    note = record.get("note")
    note = "" if note is None or (isinstance(note, float) and note != note) else str(note)
    return claim, digest.strip(), label, note, None if premises is None else json.dumps(premises, ensure_ascii=False)
