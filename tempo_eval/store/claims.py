"""The claims of the run store: one verified claim of a result, with its verdict and evidence."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

CLAIM_COLUMNS = [
    "row", "query_id", "run", "metric", "idx", "claim", "verdict", "evidence",
    "probabilities", "reason", "confidence", "error", "side",
]


def _claim_extra(extra: str | None) -> tuple[str | None, str | None]:
    """(error, side) from a claim row's `extra` JSON: the verifier's error text (ERROR verdicts)
    and the Factual Correctness side."""
    if not extra:
        return None, None
    found = json.loads(extra)
    error, side = found.get("error"), found.get("side")
    return (None if error is None else str(error)), (None if side is None else str(side))


def _claim_record(claim: Any) -> dict[str, Any]:
    """A claim entry of `details["claims"]` as a dict (a ClaimVerdict, a mapping, or any text)."""
    if hasattr(claim, "to_record"):
        return dict(claim.to_record())
    if isinstance(claim, Mapping):
        return dict(claim)
    return {"claim": str(claim)}


class ClaimRecords:
    """Per-claim verdicts in the workspace database: a part of `tempo_eval.store.runs.RunStore`, which
    supplies the connection `_conn`, the lock `_lock` and the other parts' methods."""

    def claims_frame(self, run_id: int) -> pd.DataFrame:
        """One row per verified claim: row, query_id, run, metric, idx, claim, verdict, evidence,
        probabilities (dict or None), reason, confidence (NaN when the verifier gave none), error
        (the verifier's error text for ERROR verdicts, else None), side (Factual Correctness:
        "response" or "reference", else None)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT c.row_idx, r.query_id, r.system, c.metric, c.idx, c.claim, c.verdict, c.evidence,"
                " c.probabilities, c.reason, c.confidence, c.extra FROM claims c JOIN results r"
                " ON r.run_id = c.run_id AND r.row_idx = c.row_idx AND r.metric = c.metric"
                " WHERE c.run_id = ? ORDER BY c.row_idx, c.metric, c.idx",
                (run_id,),
            ).fetchall()
        rows = [
            (*r[:8], None if r[8] is None else json.loads(r[8]), r[9],
             math.nan if r[10] is None else float(r[10]), *_claim_extra(r[11]))
            for r in rows
        ]
        frame = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
        frame["probabilities"] = pd.Series([r[8] for r in rows], dtype=object)
        frame["confidence"] = pd.to_numeric(frame["confidence"], errors="coerce").astype(float)
        return frame
