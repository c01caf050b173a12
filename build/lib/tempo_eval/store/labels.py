"""Human labels of claim verdicts, stored in the workspace database (table `claim_labels`).

A label is keyed by the claim text and a hash of the premises it was checked against, never by a
run: the same claim against the same premises in a later run finds its label again. Labels export
to and import from CSV or JSONL with the columns `claim`, `premises_hash`, `label`, `note` and
(optional) `premises` (a JSON list of strings).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from tempo_eval.io.errors import InputError
from tempo_eval.store.db import connect, json_or

#: what a human may say about a claim (the verifiers' three-way scale)
LABELS = ("SUPPORTED", "NEUTRAL", "CONTRADICTED")
LABEL_COLUMNS = ["claim", "premises_hash", "label", "note", "premises", "labelled_at"]


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

    def set_label(self, claim: str, premises: Sequence[str], label: str, note: str = "") -> None:
        """Store (or replace) the human label of `claim` against `premises`."""
        label = _check_label(label)
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO claim_labels (claim, premises_hash, label, note, premises)"
                " VALUES (?, ?, ?, ?, ?)",
                (claim, premises_hash(premises), label, note or "", json.dumps(list(premises), ensure_ascii=False)),
            )

    def remove(self, claim: str, premises_digest: str) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "DELETE FROM claim_labels WHERE claim = ? AND premises_hash = ?", (claim, premises_digest)
            )

    def lookup(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """(claim, premises hash) -> label for the keys that have one."""
        wanted = set(keys)
        if not wanted:
            return {}
        with self._lock:
            rows = self._conn.execute("SELECT claim, premises_hash, label FROM claim_labels").fetchall()
        return {(c, h): label for c, h, label in rows if (c, h) in wanted}

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
            lines = []
            for record in frame.to_dict(orient="records"):
                record["premises"] = json_or(record["premises"], None)
                lines.append(json.dumps(record, ensure_ascii=False))
            return ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8")
        if fmt == "csv":
            buffer = io.StringIO()
            frame.to_csv(buffer, index=False)
            return buffer.getvalue().encode("utf-8")
        raise ValueError(f"format must be 'csv' or 'jsonl', got {fmt!r}")

    def import_labels(self, data: bytes, name: str) -> int:
        """Add the labels of a CSV or JSONL file (by its name's extension); returns how many.

        Nothing is written unless every row is valid; a bad row raises InputError naming the
        file, row and field.
        """
        records = _read_records(data, name)
        rows = []
        for number, record in enumerate(records, start=1):
            rows.append(_label_row(record, name, number))
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO claim_labels (claim, premises_hash, label, note, premises)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)


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
        records = []
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise InputError("this line is not valid JSON; expected one JSON object per line", source=name, line=line_number) from None
            if not isinstance(record, dict):
                raise InputError("expected a JSON object with claim, premises_hash and label", source=name, line=line_number)
            records.append(record)
        return records
    if name.lower().endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in ("claim", "label") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}; expected claim, premises_hash, label, note", source=name)
        return list(reader)
    raise InputError("expected a .csv or .jsonl file of labels", source=name)


def _label_row(record: Mapping[str, Any], name: str, number: int) -> tuple[str, str, str, str, str | None]:
    claim = record.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        raise InputError("the claim is empty; expected the claim text", source=name, row=number, column="claim")
    premises = record.get("premises")
    if isinstance(premises, str) and premises.strip():
        try:
            premises = json.loads(premises)
        except ValueError:
            raise InputError("expected a JSON list of premise texts", source=name, row=number, column="premises") from None
    if premises in (None, ""):
        premises = None
    elif not (isinstance(premises, list) and all(isinstance(p, str) for p in premises)):
        raise InputError("expected a JSON list of premise texts", source=name, row=number, column="premises")
    digest = record.get("premises_hash")
    if not isinstance(digest, str) or not digest.strip():
        if premises is None:
            raise InputError("give premises_hash or premises", source=name, row=number, column="premises_hash")
        digest = premises_hash(premises)
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
