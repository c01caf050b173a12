"""Run diff: two evaluation runs side by side. Which rows got better, which got worse, per metric.

Pick a baseline and a candidate run (any two stored runs; the Runs page's "Compare with…" opens
this page on its selected runs) and the tolerance under which a change counts as none. Per
metric both runs hold: both means, the mean change with its 95% CI, the paired test's p-value,
improved / regressed / unchanged rows and rows that became (not) measurable. Below: the rows,
worst regression first, filterable; a scatter of baseline against candidate; a row clicked in
either opens both versions side by side. Everything is computed by `tempo_eval.compare.run_diff`.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tempo_eval.compare.report_html import diff_html
from tempo_eval.compare.run_diff import DEFAULT_TOLERANCE, RunDiff, diff_stored
from tempo_eval.metrics.catalog import DIRECTION_WORDS
from tempo_eval.viz.run_diff import diff_scatter
from tempo_eval_app import (
    errors,
    formatting,
    links,
    row_detail,
    selection,
    store_reads,
    time_slices,
    widgets,
    words,
)

selection.page_setup("Run diff")

SHOW = {
    "regressed": "Regressed",
    "improved": "Improved",
    "changed": "Every change (incl. NaN)",
    "all": "All rows",
}
_NONE = {"regressed": "No row regressed", "improved": "No row improved", "changed": "No row changed"}
_CHANGED = ["regressed", "improved", "increased", "decreased", "became not measurable", "became measurable"]
TESTS = {"student": "paired t-test", "fisher": "Fisher randomisation (paired)"}


@st.cache_data(show_spinner="Comparing the two runs…", max_entries=16)
def _diff(db: str, baseline: tuple[int, str, int], candidate: tuple[int, str, int],
          tolerance: float, test: str) -> RunDiff:
    """The diff, cached per run identity: (id, created_at, results) of each run. Ids are never
    reused in a workspace, and the creation time tells a run of a workspace made again at the
    same path from the old one's run of the same id."""
    return diff_stored(store_reads.store(), baseline[0], candidate[0], tolerance=tolerance, test=test)


def _defaults(runs: pd.DataFrame, ids: list[int]) -> tuple[int, int]:
    """Baseline and candidate when the address names none: the two active runs (older first),
    else the two newest runs of the active dataset, else the two newest runs."""
    active = [r for r in selection.active_run_ids() if r in ids]
    if len(active) >= 2:
        older, newer = sorted(active[:2])
        return older, newer
    dataset_id = selection.active_dataset_id()
    mine = [int(i) for i in runs.loc[runs["dataset_id"] == dataset_id, "id"]] if dataset_id is not None else []
    pool = mine if len(mine) >= 2 else ids
    return pool[1], pool[0]  # runs are listed newest first


def _candidate_for(runs: pd.DataFrame, baseline: int) -> int:
    """The newest other run of the baseline's dataset (else the newest other run): what "Compare
    with…" on the Runs page offers for one selected run."""
    others = runs[runs["id"] != baseline]
    same = others[others["dataset_id"] == int(runs.set_index("id").at[baseline, "dataset_id"])]
    return int((same if not same.empty else others)["id"].iloc[0])


def _gone_in_link(ids: list[int]) -> list[int]:
    """The run ids the address names (?base=, ?cand=) on the page's first render that no stored
    run has: deleted since the link was saved (ids are never reused, so it names no other run)."""
    if "diff_base" in st.session_state or "diff_cand" in st.session_state:
        return []
    named = [(links.param(name) or "").strip().lstrip("#") for name in ("base", "cand")]
    return [int(raw) for raw in named if raw.isdecimal() and int(raw) not in ids]


def _pickers(runs: pd.DataFrame) -> tuple[int, int, float, str]:
    ids = [int(i) for i in runs["id"]]
    names = {int(r.id): f"{store_reads.run_label(int(r.id), r.name, r.config_hash)} · {r.dataset}" for r in runs.itertuples()}
    gone = _gone_in_link(ids)
    links.init_from_param("diff_base", "base", int, lambda v: v in ids)
    links.init_from_param("diff_cand", "cand", int, lambda v: v in ids)
    links.init_from_param("diff_tol", "tol", float, lambda v: 0.0 <= v <= 1.0)
    base_default, cand_default = _defaults(runs, ids)
    if st.session_state.get("diff_base") not in ids:  # not chosen yet, or a deleted run
        st.session_state["diff_base"] = base_default
    if st.session_state.get("diff_cand") not in ids:
        base = st.session_state["diff_base"]
        st.session_state["diff_cand"] = cand_default if base == base_default else _candidate_for(runs, base)
    c1, c2, c3, c4 = st.columns([3, 3, 1, 2])
    baseline = c1.selectbox("Baseline run", ids, key="diff_base", format_func=names.get)
    candidate = c2.selectbox("Candidate run", ids, key="diff_cand", format_func=names.get)
    tolerance = c3.number_input("Tolerance", 0.0, 1.0, DEFAULT_TOLERANCE, 0.005, format="%.3f", key="diff_tol",
                                help="A row whose score moved by at most this much counts as unchanged.")
    test = c4.selectbox("Significance test", list(TESTS), key="diff_test", format_func=TESTS.get,
                        help="The paired test of the Compare page, on the rows measured in both runs.")
    if gone:  # said, not replaced by other runs: the diff waits for the user's choice
        st.warning(f"The link names run(s) {formatting.md_escape(', '.join(f'#{i}' for i in gone))}, which no "
                   "longer exist (deleted). Pick the runs to compare above.")
        st.stop()
    links.set_params(base=baseline, cand=candidate, tol=None if tolerance == DEFAULT_TOLERANCE else tolerance)
    return int(baseline), int(candidate), float(tolerance), str(test)


def _identity(by_id: pd.DataFrame, run_id: int) -> tuple[int, str, int]:
    """What the diff's cache keys a run on: id, creation time and number of results."""
    return int(run_id), str(by_id.at[run_id, "created_at"]), int(by_id.at[run_id, "n_results"])


def _summary(report: RunDiff) -> None:
    table = report.summary_table()
    if "metric" in table.columns:
        table["metric"] = [words.metric_label(m) for m in table["metric"]]
    config = {c: st.column_config.NumberColumn(c, format="%.3f")
              for c in ("baseline mean", "candidate mean", "95% CI low", "95% CI high")}
    config["mean change"] = st.column_config.NumberColumn("mean change", format="%+.3f",
                                                          help="Candidate mean − baseline mean, over the rows measured in both")
    config["p-value"] = st.column_config.NumberColumn("p-value", format="%.4f")
    st.dataframe(table, hide_index=True, width="stretch", column_config=config, key="diff_summary")


def _default_metric(report: RunDiff) -> str:
    regressed = report.summary["regressed"] + report.summary["became_not_measurable"]
    return str(regressed.idxmax()) if regressed.max() > 0 else report.metrics[0]


def _rows(report: RunDiff, metric: str, show: str) -> pd.DataFrame:
    rows = report.rows[report.rows["metric"] == metric]
    if show == "changed":
        return rows[rows["outcome"].isin(_CHANGED)]
    if show in ("regressed", "improved"):
        return rows[rows["outcome"] == show]
    return rows


def _row_table(report: RunDiff, shown: pd.DataFrame) -> int | None:
    """The rows, worst first; the index (in `report.rows`) of the row the user clicked, if any."""
    table = report.rows_table().loc[shown.index]
    config = {
        "baseline score": st.column_config.NumberColumn(format="%.3f"),
        "candidate score": st.column_config.NumberColumn(format="%.3f"),
        "change": st.column_config.NumberColumn(format="%+.3f"),
        "query": st.column_config.TextColumn(width="large"),
    }
    order = ["query id", "baseline score", "candidate score", "change", "outcome", "query",
             "baseline reason code", "candidate reason code"]
    event = st.dataframe(table.reset_index(drop=True), hide_index=True, width="stretch", column_config=config,
                         column_order=order, key="diff_rows", on_select="rerun", selection_mode="single-row")
    picked = widgets.selected(event)
    return int(shown.index[picked[0]]) if picked and picked[0] < len(shown) else None


def _scatter(report: RunDiff, metric: str) -> int | None:
    rows = report.rows[report.rows["metric"] == metric]
    fig = diff_scatter(rows, metric=metric, baseline=store_reads.run_label(report.baseline["id"]),
                       candidate=store_reads.run_label(report.candidate["id"]), label=words.metric_label(metric))
    event = st.plotly_chart(fig, key=f"diff_scatter_{metric}", on_select="rerun", selection_mode="points",
                            width="stretch")
    for point in widgets.selected(event, "points"):
        if isinstance(point, dict) and point.get("customdata") is not None:
            return int(point["customdata"])
    return None


def _both_versions(report: RunDiff, index: int) -> None:
    line = report.rows.loc[index]
    st.subheader("Both versions of the row")
    st.caption(
        f"{formatting.md_escape(words.metric_label(line['metric']))} · query {formatting.md_escape(line['query_id'])}: "
        f"{formatting.fmt_score(line['baseline'])} → {formatting.fmt_score(line['candidate'])} "
        f"({formatting.md_escape(line['outcome'])})"
    )
    for column, side, run in zip(st.columns(2), ("baseline", "candidate"), (report.baseline, report.candidate),
                                 strict=True):
        with column:
            st.markdown(f"**{formatting.md_escape(side.capitalize())}** · {formatting.md_escape(store_reads.run_label(run['id']))}",
                        help=f"Name: {formatting.md_escape(run['name'])}")
            row_detail.show_row(int(run["id"]), int(line[f"row_{side}"]), key=f"diff_{side}")


def _unmatched(report: RunDiff) -> None:
    for side, keys in (("baseline", report.matching.unmatched_baseline),
                       ("candidate", report.matching.unmatched_candidate)):
        if keys:
            with st.expander(f"{len(keys)} row(s) only in the {formatting.md_escape(side)}: left out of every figure"):
                st.dataframe(pd.DataFrame({"query": keys}), hide_index=True, width="stretch", key=f"diff_only_{side}")


def _downloads(report: RunDiff, baseline: int, candidate: int) -> None:
    stem = f"run_diff_{baseline}_vs_{candidate}"
    c1, c2, _ = st.columns([1, 1, 4])
    c1.download_button("Export HTML", data=lambda: diff_html(report).encode("utf-8"), file_name=f"{stem}.html",
                       mime="text/html", key="diff_html", icon=":material/download:",
                       help="One file with the figures and charts; opens offline.")
    c2.download_button("Export CSV", data=lambda: report.to_csv().encode("utf-8"), file_name=f"{stem}.csv",
                       mime="text/csv", key="diff_csv", icon=":material/download:",
                       help="Every matched row on every metric, with both scores.")


def _over_time(baseline: int, candidate: int, metric: str) -> None:
    """The Scores over time chart of the two runs on the metric chosen above."""
    c1, c2 = st.columns(2)
    by = c1.selectbox("By", list(time_slices.BY), key="diff_time_by", format_func=time_slices.BY.get)
    bins = time_slices.BINS if by == "as_of" else ("year",)
    bin_ = c2.selectbox("Bin", bins, index=len(bins) - 1, key="diff_time_bin")
    time_slices.show([baseline, candidate], metric, by, bin_, key="diff_time")


with errors.page_guard("run diff"):
    runs = store_reads.runs_table(None)
    runs = runs[runs["n_results"] > 0]
    if len(runs) < 2:
        st.info("A run diff needs two stored runs with results: evaluate a dataset on **Evaluate**, change "
                "something (a prompt, a model, a retriever) and evaluate it again.")
        st.stop()
    baseline, candidate, tolerance, test = _pickers(runs)
    by_id = runs.set_index("id")
    report = _diff(store_reads.db_path(), _identity(by_id, baseline), _identity(by_id, candidate), tolerance, test)
    if baseline == candidate:
        st.caption("Baseline and candidate are the same run: every measured row is unchanged.")
    st.caption(formatting.md_escape(report.headline()))
    if not report.metrics:
        st.warning("The two runs hold no metric in common: there is nothing to compare.")
        st.stop()
    _summary(report)
    _downloads(report, baseline, candidate)
    _unmatched(report)

    st.subheader("Rows, worst regression first")
    f1, f2 = st.columns([1, 2])
    if st.session_state.get("diff_metric") not in report.metrics:
        st.session_state["diff_metric"] = _default_metric(report)
    metric = f1.selectbox("Metric", report.metrics, key="diff_metric", format_func=words.metric_label)
    st.session_state.setdefault("diff_show", "regressed")
    show = f2.segmented_control("Show", list(SHOW), key="diff_show", format_func=SHOW.get) or "all"
    shown = _rows(report, metric, show)
    way = str(report.summary.at[metric, "direction"])
    if way != "higher":
        st.caption(f"{formatting.md_escape(metric)}: {formatting.md_escape(DIRECTION_WORDS[way])}"
                   + (": a rise is a regression." if way == "lower"
                      else ": a change is counted as increased or decreased, never as improved or regressed."))
    if shown.empty and show in ("regressed", "improved", "changed"):
        st.caption(f"{formatting.md_escape(_NONE[show])} on this metric "
                   f"(a change of at most {tolerance:.3f} counts as unchanged).")
    else:
        st.caption(f"{len(shown):d} row(s). Click a row, or a point of the scatter, to open both versions.")
    left, right = st.columns([3, 2])
    with left:
        picked = _row_table(report, shown)
    with right:
        point = _scatter(report, metric)
    opened = picked if picked is not None else point
    if opened is not None and opened in report.rows.index:
        _both_versions(report, opened)
    with st.expander("Over time: both runs per bin of the rows' time, where the level changes"):
        _over_time(baseline, candidate, metric)
    links.view_link("base", "cand", "tol")
