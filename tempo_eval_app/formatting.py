"""Text formatting shared by the pages: one number format, markdown escaping, failed-row summaries.

Numbers read the same everywhere: scores with 3 decimals (`fmt_score`), p-values below 0.001 as
"< 0.001" (`fmt_p`), counts with thousands separators (`fmt_count`), and a missing value as "—"
(`MISSING`), never "None" or "nan"; the reason goes beside it or in the tooltip. `display_table`
applies all of it to a table, with its columns named in the user's words (`words.column_labels`).
"""

from __future__ import annotations

import itertools
import re
import string
from collections.abc import Iterable

import pandas as pd

from tempo_eval.verify.base import verdict_label
from tempo_eval_app import words

#: what a missing value shows
MISSING = "—"
#: columns holding p-values
P_COLUMNS = frozenset({"p_value", "p_holm", "p_adjusted", "p", "p-value", "p-value (Holm)", "p_corrected"})


def is_missing(value: object) -> bool:
    """None, NaN, pd.NA / NaT and the empty string: what shows as MISSING."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None", "nan", "NaN")):
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array: not missing
        return False


def fmt_score(value: object) -> str:
    """A score with 3 decimals ("0.750"); MISSING for none."""
    return MISSING if is_missing(value) else f"{float(value):.3f}"


def fmt_p(value: object) -> str:
    """A p-value with 3 decimals, "< 0.001" below 0.001; MISSING for none."""
    if is_missing(value):
        return MISSING
    return "< 0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def fmt_count(value: object) -> str:
    """A whole number (a count, an age in days) with thousands separators ("12,345"); MISSING for none."""
    return MISSING if is_missing(value) else f"{int(value):,}"


def fmt_value(value: object, column: str = "") -> str:
    """Any table cell as the pages show it: p-values by `fmt_p`, other floats by `fmt_score`,
    integers by `fmt_count`, a {reason: count} dict as "reason: n, ...", missing as MISSING."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt_count(v)}" for k, v in value.items()) or MISSING
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or MISSING
    if is_missing(value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if column in P_COLUMNS:
        return fmt_p(value)
    if isinstance(value, (int,)) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"):
        return fmt_count(value)
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") == "f"):
        return fmt_score(value)
    return str(value)


def year_ranges(years: Iterable[object], *, most: int | None = None) -> str:
    """Years as the pages list them: sorted, each once, runs of consecutive years as one range
    ("1666, 1675–1710"; "1675–1676" for two); "" for none. With `most`, only the first `most`
    pieces (a year or a range), then " …". Values that are not whole numbers are left out."""
    unique = sorted({int(y) for y in years if _whole(y)})
    pieces: list[str] = []
    # consecutive years keep the same difference to their position: one group per range
    for _, group in itertools.groupby(enumerate(unique), key=lambda pair: pair[1] - pair[0]):
        span = [year for _, year in group]
        pieces.append(str(span[0]) if len(span) == 1 else f"{span[0]}–{span[-1]}")
    if most is not None and len(pieces) > most:
        return ", ".join(pieces[:most]) + " …"
    return ", ".join(pieces)


def _whole(value: object) -> bool:
    try:
        return float(value) == int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return False


def pairs_table(pairs: pd.DataFrame) -> pd.DataFrame:
    """A significance table's pairs of runs (`ComparisonReport.pairs_frame`) as the pages show
    them: `display_table`'s words, A's wins / ties / losses in one column ("3 / 7 / 20"), and no
    metric column when every pair is on the same metric (the page names it), so the table fits a
    1280-pixel screen."""
    frame = pairs.copy()
    if {"wins", "ties", "losses"} <= set(frame.columns):
        counts = [f"{fmt_count(w)} / {fmt_count(t)} / {fmt_count(lo)}"
                  for w, t, lo in zip(frame["wins"], frame["ties"], frame["losses"], strict=True)]
        at = list(frame.columns).index("wins")
        frame = frame.drop(columns=["wins", "ties", "losses"])
        frame.insert(at, "A better / tie / worse", counts)
    if "metric" in frame.columns and frame["metric"].nunique() <= 1:
        frame = frame.drop(columns=["metric"])
    return display_table(frame)


def row_name(query_id: object, row: int) -> str:
    """How a page names a dataset row: "query q1" by its query id, else "row 5", numbered from 1
    as a spreadsheet numbers them (`row` is the 0-based position the store keeps)."""
    if not is_missing(query_id):
        return f"query {query_id}"
    return f"row {int(row) + 1:,}"


#: columns that hold a verdict (the verifier's, a human label, Turn Faithfulness' yes / no / idk)
VERDICT_COLUMNS = frozenset({"verdict", "human", "label"})


def display_table(frame: pd.DataFrame, *, keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """`frame` as the pages show it: every number in the one format (`fmt_value`), missing values
    as MISSING, verifier ids, metrics and verdicts by their names, columns named in the user's words. Columns in `keep`
    stay as they are (ids a selection maps back)."""
    shown = pd.DataFrame(index=frame.index)
    for column in frame.columns:
        values = frame[column]
        if column in keep:
            shown[column] = values
        elif column == "verifier":
            shown[column] = [words.verifier_label(v) for v in values]
        elif column == "metric":
            shown[column] = [words.metric_label(v) for v in values]
        elif column in VERDICT_COLUMNS:
            shown[column] = [verdict_label(v) if not is_missing(v) else MISSING for v in values]
        else:
            shown[column] = [fmt_value(v, str(column)) for v in values]
    return shown.rename(columns=words.column_labels([c for c in shown.columns if c not in keep]))


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
