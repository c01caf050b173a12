"""`compare`'s nested input built from a tidy frame, for tests that hold scores as a frame."""

from __future__ import annotations

import pandas as pd


def per_query_from_frame(
    frame: pd.DataFrame, *, by: str = "run", query: str = "query_id"
) -> dict[str, dict[str, dict[str, float]]]:
    """`compare`'s input from a tidy frame with columns `by`, metric, `query` and score
    (e.g. runner results frames concatenated with a run column). Duplicates raise ValueError."""
    missing = [c for c in (by, "metric", query, "score") if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame has no column {missing[0]!r} (columns: {', '.join(map(str, frame.columns))})")
    duplicated = frame.duplicated([by, "metric", query])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise ValueError(
            f"{by}={first[by]!r}, metric={first['metric']!r}, {query}={first[query]!r} appears more than once"
        )
    out: dict[str, dict[str, dict[str, float]]] = {}
    for run, metric, qid, score in frame[[by, "metric", query, "score"]].itertuples(index=False, name=None):
        out.setdefault(str(run), {}).setdefault(str(metric), {})[str(qid)] = float(score)
    return out
