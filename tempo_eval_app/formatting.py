"""Text formatting shared by the pages: scores, markdown escaping, failed-row summaries."""

from __future__ import annotations

import math

import pandas as pd


def fmt_score(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"

_MD_SPECIAL = "\\`*_{}[]()<>#+-.!|~$:"


def md_escape(text: object) -> str:
    """User text made inert inside Streamlit markdown (captions, labels): every markdown and HTML
    character backslash-escaped, so a name like `[x](javascript:...)` shows as typed."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def error_summary(frame: pd.DataFrame) -> tuple[int, int, str] | None:
    """(failed, total, first reason) over the results of a run whose reason code ends in "_error"
    (row_error, judge_error, verifier_error: the setup failed, nothing was measured); None when
    no result failed."""
    if frame.empty or "reason_code" not in frame.columns:
        return None
    failed = frame[frame["reason_code"].astype(str).str.endswith("_error")]
    if failed.empty:
        return None
    first = failed.iloc[0]
    reason = " ".join(str(first.get("reason") or first["reason_code"]).split())
    return len(failed), len(frame), f"{first['metric']}: {reason}"
