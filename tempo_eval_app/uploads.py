"""Peeking into uploaded files for the column-mapping editor."""

from __future__ import annotations

import io
import json

import pandas as pd


def peek_columns(data: bytes, name: str) -> list[str]:
    """The column names of an uploaded table, best effort, for the mapping editor only (the
    loader stays the judge of the file; [] when the header cannot be read)."""
    import gzip

    lower = name.lower()
    try:
        if lower.endswith(".gz"):
            data, lower = gzip.decompress(data), lower[:-3]
        if lower.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return [str(c) for c in pq.read_schema(io.BytesIO(data)).names]
        text = data.decode("utf-8-sig", errors="replace")
        if lower.endswith((".jsonl", ".ndjson")):
            first = next((line for line in text.splitlines() if line.strip()), "")
            record = json.loads(first)
            return [str(k) for k in record] if isinstance(record, dict) else []
        if lower.endswith(".json"):
            value = json.loads(text)
            if isinstance(value, dict):
                value = next((v for v in value.values() if isinstance(v, list)), [])
            return list(dict.fromkeys(str(k) for r in value[:100] if isinstance(r, dict) for k in r))
        sep = "\t" if lower.endswith((".tsv", ".tab")) else ","
        return [str(c) for c in pd.read_csv(io.StringIO(text), sep=sep, nrows=0).columns]
    except Exception:  # a malformed file: the loader's error is what the user sees
        return []


def conversation_count(data: bytes, name: str) -> int:
    """How many conversations the command line's conversation loader reads from this file; 0 when
    it is not a conversation file (a dataset the dataset loader refused for another reason)."""
    from tempo_eval.io.conversation import load_conversations

    try:
        return len(load_conversations(data, name=name).frame)
    except (ValueError, OSError):
        return 0
