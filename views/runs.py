"""Runs: the leaderboard of every stored run of the active dataset (or of all datasets).

Per run: name, dataset, status, when it ran and who made it, how long it took, its verifier, judge and model, the
judge's token usage; per metric the mean with its 95% CI, measurable/total and NaN counts by
reason. Filter (by text, status, "Mine" or who made it) and sort; select runs to open them in Results, Compare or Claims; diff two runs;
rename, note, tag or delete a run and delete a dataset, each delete after a confirmation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import streamlit as st

from tempo_eval.common.identity import shown_user, user_name
from tempo_eval.compare.leaderboard import config_diff, mean_changes
from tempo_eval.metrics.catalog import DIRECTION_WORDS, direction
from tempo_eval.store.runs import RunInUse
from tempo_eval_app import (
    errors,
    formatting,
    identity,
    links,
    permissions,
    run_trends,
    selection,
    store_reads,
    widgets,
    words,
)

selection.page_setup("Runs")

STATUSES = ["finished", "running", "cancelled", "failed"]
#: why the last delete was refused (a run being evaluated), said once on the next render
_REFUSED_KEY = "runs_delete_refused"
PAGES = {
    "Results": "views/results.py",
    "Compare": "views/compare.py",
    "Claims": "views/claims.py",
}


def _duration(seconds: float) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "—"
    seconds = max(float(seconds), 0.0)
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _tokens(usage: dict | None) -> str:
    if not usage:
        return ""
    return f"{int(usage.get('total_tokens', 0)):,} ({int(usage.get('prompt_tokens', 0)):,} in, {int(usage.get('completion_tokens', 0)):,} out)"


def _nan_text(reasons: dict) -> str:
    return ", ".join(f"{code}: {count}" for code, count in sorted(reasons.items())) if reasons else ""


def _ci_text(low: float, high: float) -> str:
    return "—" if math.isnan(low) else f"{low:.3f}–{high:.3f}"


def leaderboard_table(runs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """One line per run with its setup and, per metric, mean, CI, measurable/total, NaN reasons;
    and the metric names (in order of first appearance)."""
    setups = store_reads.run_setups(runs)
    board = store_reads.runs_board(runs)
    metrics = list(dict.fromkeys(board["metric"]))
    per_run: dict[int, dict[str, object]] = {}
    for row in board.itertuples(index=False):
        record = per_run.setdefault(int(row.run_id), {})
        record[row.metric] = row.mean
        record[f"{row.metric} 95% CI"] = _ci_text(row.ci_low, row.ci_high)
        record[f"{row.metric} measurable"] = f"{row.n_measurable}/{row.n_total}"
        record[f"{row.metric} NaN"] = _nan_text(row.nan_reasons)
    records = []
    for run in runs.itertuples(index=False):
        setup = setups.get(int(run.id), {"verifier": "", "judge": "", "model": ""})
        records.append({
            "id": int(run.id), "name": run.name, "dataset": run.dataset, "status": run.status,
            "ran": run.created_at, "by": shown_user(run.created_by), "duration": _duration(run.duration_s),
            "verifier": setup["verifier"], "judge": setup["judge"], "model": setup["model"],
            "judge tokens": _tokens(run.usage), "tags": ", ".join(run.tags), "note": run.note,
            **per_run.get(int(run.id), {}),
        })
    return pd.DataFrame.from_records(records), metrics


@st.cache_data(show_spinner=False, max_entries=32)
def _leaderboard(db: str, scope: int | None, version: tuple) -> tuple[pd.DataFrame, list[str]]:
    """`leaderboard_table` of the runs of `scope` (a dataset id, None: all), cached until one of
    them changes (`version`: `store_reads.run_listing(scope)`)."""
    return leaderboard_table(store_reads.runs_table(scope))


def _run_choice_label(table: pd.DataFrame):
    names = {int(r.id): f"{store_reads.run_label(int(r.id))} · {r.dataset}" for r in table.itertuples()}
    return lambda i: names.get(int(i), f"#{i}")


def _diff(table: pd.DataFrame, a: int, b: int) -> None:
    runs = store_reads.runs_table(None).set_index("id")
    info_a, info_b = store_reads.store().run_info(a), store_reads.store().run_info(b)
    st.markdown(f"**A** = {formatting.md_escape(store_reads.run_label(a))} · **B** = {formatting.md_escape(store_reads.run_label(b))}")
    diff = config_diff(info_a["config"], info_b["config"])
    if info_a["dataset_id"] != info_b["dataset_id"]:
        st.caption("The two runs are on different datasets: their means are over different rows.")
    left, right = st.columns(2)
    with left:
        st.markdown("Settings that differ")
        if diff.empty:
            st.caption("None: the two runs have the same settings.")
        else:
            shown = diff.assign(a=diff["a"].map(str), b=diff["b"].map(str)).rename(columns={"a": "A", "b": "B"})
            st.dataframe(shown, hide_index=True, width="stretch", key="runs_diff_settings")
    with right:
        st.markdown("Metric means (B − A)")
        changes = mean_changes(
            store_reads.run_board(a, int(runs.at[a, "n_results"])),
            store_reads.run_board(b, int(runs.at[b, "n_results"])),
        )
        st.dataframe(
            changes, hide_index=True, width="stretch", key="runs_diff_means",
            column_config={
                "mean_a": st.column_config.NumberColumn("mean A", format="%.3f"),
                "mean_b": st.column_config.NumberColumn("mean B", format="%.3f"),
                "change": st.column_config.NumberColumn("B − A", format="%+.3f"),
            },
        )


def _delete_run(run_id: int) -> None:
    state = st.session_state
    try:
        permissions.require("delete_run", owner=store_reads.run_owner(run_id))
        store_reads.store().delete_run(run_id)
    except (RunInUse, permissions.PermissionDenied) as busy:  # said on the page (a callback's own output would not stay)
        state.pop("runs_confirm_delete_run", None)
        state[_REFUSED_KEY] = str(busy)
        return
    store_reads.forget_cached_reads()
    state.pop("runs_confirm_delete_run", None)
    state["runs_selected"] = [r for r in state.get("runs_selected", []) if r != run_id]
    state[selection.RUNS_KEY] = [r for r in state.get(selection.RUNS_KEY, []) if r != run_id]
    st.toast(f"Deleted run #{formatting.md_escape(run_id)}.")


def _delete_dataset(dataset_id: int) -> None:
    state = st.session_state
    try:
        permissions.require("delete_dataset")
        store_reads.store().delete_dataset(dataset_id)
    except (RunInUse, permissions.PermissionDenied) as busy:
        state.pop("runs_confirm_delete_dataset", None)
        state[_REFUSED_KEY] = str(busy)
        return
    store_reads.forget_cached_reads()
    for key in ("runs_confirm_delete_dataset", "runs_selected", selection.DATASET_KEY, selection.RUNS_KEY):
        state.pop(key, None)
    links.set_params(dataset=None, runs=None, sel=None)
    st.toast(f"Deleted dataset #{formatting.md_escape(dataset_id)}.")


def _manage_run(run_id: int) -> None:
    _say_refused_delete()
    s = store_reads.store()
    info = s.run_info(run_id)
    owner = user_name(info["created_by"])
    refused = permissions.blocked("edit_run", owner=owner)
    c1, c2, c3 = st.columns(3)
    name = c1.text_input("Name", info["name"], key=f"runs_name_{run_id}")
    note = c2.text_input("Note", info["note"], key=f"runs_note_{run_id}")
    tags = c3.text_input("Tags (comma-separated)", ", ".join(info["tags"]), key=f"runs_tags_{run_id}")
    if st.button("Save name, note and tags", key=f"runs_save_{run_id}", icon=":material/save:",
                 disabled=bool(refused), help=formatting.md_escape(refused) if refused else None):
        permissions.require("edit_run", owner=owner)
        s.rename_run(run_id, name)
        s.set_run_note(run_id, note)
        s.set_run_tags(run_id, tags.split(","))
        st.toast("Saved.")
        st.rerun()
    def question() -> str:
        counts = s.run_dependents(run_id)
        return (
            f"Delete run **{formatting.md_escape(info['name'])}** #{run_id} with its {counts['results']} results "
            f"and {counts['claims']} claims? Cached verdicts stay, so re-running it is quick."
        )

    permissions.explain(refused)
    _confirmed_delete("run", run_id, question, _delete_run, permissions.blocked("delete_run", owner=owner))


def _say_refused_delete() -> None:
    refused = st.session_state.pop(_REFUSED_KEY, None)
    if refused:
        st.warning(f"Not deleted: {formatting.md_escape(refused.rstrip('.'))}.", icon=":material/hourglass_top:")


def _manage_dataset(dataset_id: int) -> None:
    _say_refused_delete()
    s = store_reads.store()
    info = s.dataset_info(dataset_id)
    name = st.text_input("Dataset name", info["name"], key=f"runs_dataset_name_{dataset_id}")
    refused = permissions.blocked("edit_dataset")
    if st.button("Rename the dataset", key="runs_dataset_rename", icon=":material/edit:", disabled=bool(refused),
                 help=formatting.md_escape(refused) if refused else None):
        permissions.require("edit_dataset")
        s.rename_dataset(dataset_id, name)
        store_reads.forget_cached_reads()
        st.rerun()
    def question() -> str:
        counts = s.dataset_dependents(dataset_id)
        return (
            f"Delete dataset **{formatting.md_escape(info['name'])}** ({info['n_rows']} rows)? It takes with it "
            f"{counts['runs']} run(s), {counts['results']} results and {counts['claims']} claims. "
            "Cached verdicts stay."
        )

    permissions.explain(refused)
    _confirmed_delete("dataset", dataset_id, question, _delete_dataset, permissions.blocked("delete_dataset"))


def _confirmed_delete(what: str, target: int, question: Callable[[], str], delete: Callable[[int], None],
                      refused: str | None = None) -> None:
    """A "Delete this WHAT…" button that asks `question()` (what the delete takes) before
    `delete(target)` runs, as a callback: callbacks run before the widgets, so the selection can
    drop what was deleted. `refused`: why the acting user may not (the button disabled, the reason
    under it; `delete` checks again where it deletes)."""
    confirm_key = f"runs_confirm_delete_{what}"
    if refused:
        st.button(f"Delete this {formatting.md_escape(what)}…", key=f"runs_delete_{what}", icon=":material/delete:",
                  disabled=True, help=formatting.md_escape(refused) if refused else None)
        permissions.explain(refused)
    elif st.session_state.get(confirm_key) == target:
        st.warning(question())
        yes, no = st.columns(2)
        yes.button(f"Yes, delete the {formatting.md_escape(what)}", type="primary", key=f"runs_delete_{what}_yes",
                   icon=":material/delete:", on_click=delete, args=(target,))
        no.button("Cancel", key=f"runs_delete_{what}_no", on_click=st.session_state.pop, args=(confirm_key, None))
    elif st.button(f"Delete this {formatting.md_escape(what)}…", key=f"runs_delete_{what}", icon=":material/delete:"):
        st.session_state[confirm_key] = target
        st.rerun()


with errors.page_guard("runs"):
    dataset_id = selection.require_dataset_id()
    links.init_from_param("runs_all", "all", lambda v: v == "1")
    all_datasets = st.toggle("All datasets", key="runs_all", help="List the runs of every stored dataset.")
    scope = None if all_datasets else dataset_id
    runs = store_reads.runs_table(scope)
    if runs.empty:
        widgets.empty_state("No run stored for this dataset yet.", "evaluate")
    else:
        table, metrics = _leaderboard(store_reads.db_path(), scope, store_reads.run_listing(scope))

        f1, f2, f3, f4 = st.columns([2, 2, 2, 2])
        table, deltas = run_trends.pin_baseline(table, runs, metrics, f4)
        links.init_from_param("runs_filter", "q")
        text = f1.text_input("Filter", key="runs_filter", placeholder="name, tag, note, verifier…")
        statuses = f2.multiselect("Status", STATUSES, key="runs_status", placeholder="any status")
        sortable = ["ran", "name", "status", *metrics]
        links.init_from_param("runs_sort", "sort", str, lambda v: v in sortable)
        sort_by = f3.selectbox("Sort by", sortable, key="runs_sort",
                               format_func=lambda c: "when it ran" if c == "ran" else c)
        descending = f3.toggle("Descending", value=True, key="runs_desc")
        links.set_params(all="1" if all_datasets else None, q=text or None, sort=sort_by if sort_by != "ran" else None)

        searched = table[["name", "dataset", "by", "tags", "note", "verifier", "judge", "model"]]
        shown = identity.filter_widgets(table[widgets.contains_text(searched, text)], "runs", "runs")
        if statuses:
            shown = shown[shown["status"].isin(statuses)]
        shown = shown.sort_values(sort_by, ascending=not descending, na_position="last", kind="stable")
        failed = int((table["status"] == "failed").sum())
        st.caption(
            f"{len(shown):,} of {words.plural(len(table), 'run')} shown. Metric columns: mean, 95% bootstrap CI, "
            "rows measured of all rows, and why the others were not measured."
            + (f" {failed:d} run(s) failed: every result is an error, nothing was measured." if failed else "")
        )
        column_config = {
            "id": st.column_config.NumberColumn("#", width="small"),
            "status": st.column_config.TextColumn("status", width="small"),
            "by": st.column_config.TextColumn("by", help="Who made the run (unknown: before users were recorded)"),
        }
        for metric in metrics:
            label = words.metric_label(metric)
            column_config[metric] = st.column_config.NumberColumn(label, format="%.3f", help="Mean over the rows measured")
            column_config[f"{metric} 95% CI"] = st.column_config.TextColumn(f"{label} 95% CI")
            column_config[f"{metric} measurable"] = st.column_config.TextColumn(f"{label} rows measured")
            column_config[f"{metric} NaN"] = st.column_config.TextColumn(f"{label} why not measured")
        if "verifier" in shown.columns:
            shown = shown.assign(verifier=[words.verifier_label(v) if isinstance(v, str) and ":" in v else v
                                           for v in shown["verifier"]])
        for column in deltas:
            way = direction(column.removesuffix(" Δ"))
            column_config[column] = st.column_config.NumberColumn(
                f"{words.metric_label(column.removesuffix(' Δ'))} Δ", format="%+.3f",
                help="Mean minus the baseline's mean" + ("" if way == "higher" else f" ({formatting.md_escape(DIRECTION_WORDS[way])})"))
        # name, status and every metric's mean first: the scores are visible without scrolling
        order = ["id", "name", "status", *metrics, *deltas, *[f"{m} 95% CI" for m in metrics],
                 *[f"{m} measurable" for m in metrics], *[f"{m} NaN" for m in metrics],
                 "dataset", "ran", "by", "duration", "verifier", "judge", "model", "judge tokens", "tags", "note"]
        st.dataframe(shown, hide_index=True, width="stretch", column_config=column_config, key="runs_grid",
                     column_order=[c for c in order if c in shown.columns])

        ids = [int(i) for i in shown["id"]]
        links.init_from_param("runs_selected", "sel", lambda v: [int(x) for x in v.split(",")],
                              lambda v: all(x in ids for x in v))
        chosen = st.multiselect("Selected runs", ids, key="runs_selected", format_func=_run_choice_label(table),
                                placeholder="choose runs to open, diff or manage")
        links.set_params(sel=chosen or None)
        if chosen:
            chosen_datasets = {int(d) for d in runs.set_index("id").loc[chosen, "dataset_id"]}
            same_dataset = len(chosen_datasets) == 1
            cols = st.columns(len(PAGES))
            for column, (label, page) in zip(cols, PAGES.items(), strict=True):
                if column.button(f"Open in {formatting.md_escape(label)}", key=f"runs_open_{label}", disabled=not same_dataset,
                                 icon=":material/open_in_new:", width="stretch"):
                    selection.open_page(page, chosen_datasets.pop(), chosen)
            if not same_dataset:
                st.caption("The selected runs are of different datasets: choose runs of one dataset to open them together.")
        if chosen and st.button("Compare with…" if len(chosen) == 1 else "Open in Run diff", key="runs_run_diff",
                                icon=":material/difference:", help="Rows that got better or worse, run against run."):
            # the first selected run is the baseline; with one, the candidate is picked on the page
            st.switch_page("views/run_diff.py", query_params={"base": chosen[0], **({"cand": chosen[1]} if len(chosen) > 1 else {})})
        if len(chosen) == 2:
            st.subheader("Diff of the two selected runs")
            _diff(table, chosen[0], chosen[1])
        if len(chosen) == 1:
            st.subheader("Manage the selected run")
            _manage_run(chosen[0])
    if not runs.empty:
        with st.expander("Trends across the runs of the active dataset"):
            run_trends.show_trends(runs, dataset_id)
    with st.expander("Manage the active dataset"):
        _manage_dataset(dataset_id)
    links.view_link("all", "q", "sort", "sel", "mine")
