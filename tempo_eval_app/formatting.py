"""Text formatting shared by the pages: scores, markdown escaping, failed-row summaries."""

from __future__ import annotations

import math
import re
import string

import pandas as pd


def fmt_score(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


_MD_SPECIAL = frozenset(string.punctuation)  # every ASCII punctuation character may be backslash-escaped
#: where GitHub-flavoured markdown turns plain text into a link even when escaped: "http://",
#: "www." and e-mail addresses ("@"); a word joiner (U+2060, invisible) there keeps it text
_AUTOLINK = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def md_escape(text: object) -> str:
    """User text made inert inside Streamlit markdown (st.markdown, st.error, captions, labels,
    tooltips): every ASCII punctuation character backslash-escaped, so links `[x](u)`, images
    `![x](u)`, autolinks `<http://...>`, HTML, `$` math and `:color[...]` / `:material/...:`
    directives show as typed; and a word joiner (invisible) after the ":" of "://", between "www"
    and "." and after "@", so bare URLs and e-mail addresses are not auto-linked. The reader sees
    the original characters."""
    joined = _AUTOLINK.sub(WORD_JOINER, str(text))
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in joined)


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
