"""The workspace's run store and cached reads of it (datasets, results, claims).

The store is created once per process with `st.cache_resource`; frames read from it are cached
with `st.cache_data`, keyed by the workspace database path so separate workspaces never mix."""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.common import run_names
from tempo_eval.common.identity import user_name
from tempo_eval.compare.leaderboard import leaderboard, run_setup
from tempo_eval.store.db import database_location
from tempo_eval.store.run_records import runs_frame
from tempo_eval.store.runs import RunStore
from tempo_eval_app import run_counts
from tempo_eval_app.identity import current_user
from tempo_eval_app.permissions import require


@st.cache_resource(show_spinner=False)
def store_for(db: str) -> RunStore:
    """The run store of the workspace database `db` (one connection per process and workspace)."""
    return RunStore(db)


def db_path() -> str:
    """The workspace database (its file, or its TEMPO_EVAL_DB URL): the key of its shared store."""
    return database_location()


def store() -> RunStore:
    """The run store of the current workspace (one connection per process and workspace)."""
    return store_for(db_path())


def run_owner(run_id: int) -> str | None:
    """Who made the run (`created_by`), for the actions on one's own runs; None when nobody was
    recorded or there is no such run (such a run is nobody's own: `access.denial`)."""
    try:
        return user_name(store().run_info(int(run_id))["created_by"])
    except KeyError:
        return None


#: a cached dataset frame of more rows than this is put out of the cycle collector's way (`_settle`)
SETTLE_OVER_ROWS = 20_000


# Large read-only frames are shared, not copied: st.cache_data would unpickle a 100,000-row frame
# on every rerun. Callers never modify them in place (they filter, copy or build new frames).
@st.cache_resource(show_spinner=False, max_entries=32)
def _dataset_frame(db: str, dataset_id: int) -> pd.DataFrame:
    frame = store_for(db).dataset_frame(dataset_id)
    if len(frame) > SETTLE_OVER_ROWS:
        _settle()
    return frame


def _settle() -> None:
    """A dataset frame holds a Python object per text and list cell (600,000 for 300,000 rows):
    each full pass of Python's cycle collector walked them all, 0.4 s with the GIL held (measured),
    so every session and the health check stalled (up to 0.84 s a pass under load, issue 29).
    The cached frame lives as long as the process: moved, with what else is alive now, to the
    permanent generation (gc.freeze), it is never walked again. Reference counting still frees
    it when the cache drops it (a frame holds no reference cycle). Collected first, so that no
    cyclic garbage of the moment is frozen with it."""
    gc.collect()
    gc.freeze()


def dataset_frame(dataset_id: int) -> pd.DataFrame:
    """The canonical frame of a stored dataset (cached; do not modify it in place)."""
    return _dataset_frame(db_path(), int(dataset_id))


def dataset_info(dataset_id: int) -> dict[str, Any]:
    return store().dataset_info(int(dataset_id))


def save_dataset(dataset: Any) -> int:
    """Store a dataset a page was given, as the current user's (`identity.current_user`) when it is
    new: only a role that may upload (the bundled samples are stored by `samples` for every role)."""
    require("upload")
    return store().save_dataset(dataset, user=current_user())


@st.cache_resource(show_spinner=False, max_entries=64)
def _results(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return store_for(db).results_frame(run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def _claims(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return store_for(db).claims_frame(run_id)


def n_results(run_id: int) -> int:
    """The run's number of results (`run_counts`: counted once per change of the run's row, and
    at most once a second while it runs). Part of the cache keys of its frames: a run still being
    written is read again as it grows."""
    db = db_path()
    store = store_for(db)
    return run_counts.counts(db, store, int(run_id), store.run_stamp(int(run_id)))[0]


def results_frame(run_id: int) -> pd.DataFrame:
    """`RunStore.results_frame`, cached per run and size (shared: do not modify it in place)."""
    return _results(db_path(), int(run_id), n_results(run_id))


def claims_frame(run_id: int) -> pd.DataFrame:
    return _claims(db_path(), int(run_id), n_results(run_id))


@st.cache_data(show_spinner=False, max_entries=4096)
def _run_config(db: str, run_id: int, config_hash: str) -> Any:
    """A run's stored configuration: it never changes for a (run, config hash), and run ids are
    never reused, so the pages' lists read it once per run, not on every rerun."""
    try:
        return store_for(db).run_info(int(run_id))["config"]
    except KeyError:  # deleted meanwhile
        return None


def run_label(run_id: int, name: str | None = None, config_hash: str | None = None) -> str:
    """The run's short label, as every page names it (`tempo_eval.common.run_names.run_label`:
    "#2 · claims TF · lexical"); "#N" alone for a run deleted meanwhile. A list of runs passes
    each run's name and config hash from the runs table it already holds: no read per run."""
    if name is not None and config_hash is not None:
        return run_names.run_label(int(run_id), name, _run_config(db_path(), int(run_id), str(config_hash)))
    try:
        info = store().run_info(int(run_id))
    except KeyError:
        return f"#{int(run_id)}"
    return run_names.run_label(int(run_id), info["name"], info["config"])


def claims_of_runs(run_ids: Sequence[int]) -> pd.DataFrame:
    """The claims of several runs in one frame (Claims and Review), each row led by its run's
    label (`eval_run`) and `run_id`; an empty frame when none of the runs has claims."""
    parts = []
    for run_id in run_ids:
        frame = claims_frame(run_id)
        if frame.empty:
            continue
        frame = frame.copy()
        frame.insert(0, "eval_run", run_label(run_id))
        frame.insert(1, "run_id", run_id)
        parts.append(frame)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def run_listing(dataset_id: int | None) -> tuple[tuple[Any, ...], ...]:
    """The runs of a dataset (None: of all) as the pages list them: `RunStore.run_rows`, each
    with its n_results and n_failed appended (`run_counts`). One read of the runs table per call;
    it changes when a run of the dataset is created, renamed, noted, tagged, grows, ends or is
    deleted (by any process), and only then: the key of the pages' cached run lists, which a job
    writing another dataset's run leaves alone."""
    db = db_path()
    store = store_for(db)
    return tuple((*row, *run_counts.counts(db, store, int(row[0]), (row[4], row[6], row[7])))
                 for row in store.run_rows(None if dataset_id is None else int(dataset_id)))


@st.cache_data(show_spinner=False, max_entries=64)
def _runs_table(db: str, listing: tuple[tuple[Any, ...], ...]) -> pd.DataFrame:
    return runs_frame([row[:-2] for row in listing], {row[0]: row[-2:] for row in listing})


def runs_table(dataset_id: int | None) -> pd.DataFrame:
    """`RunStore.list_runs` of one dataset (None: of every dataset), from `run_listing`: a
    rename, a deletion, a run's end shows at the next rerun; a running run's counts within a
    second or so."""
    return _runs_table(db_path(), run_listing(dataset_id))


@st.cache_data(show_spinner=False, max_entries=4096)
def _run_board(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return leaderboard(store_for(db).run_scores([run_id]))


def run_board(run_id: int, n_results: int) -> pd.DataFrame:
    """The leaderboard rows of one run (`tempo_eval.compare.leaderboard.leaderboard`), cached per run and
    number of results (`n_results` from `runs_table`), so a run still being written is read
    again as it grows."""
    return _run_board(db_path(), int(run_id), int(n_results))


@st.cache_data(show_spinner="Aggregating the runs…", max_entries=64)
def _runs_board(db: str, signature: tuple[tuple[int, int], ...]) -> pd.DataFrame:
    return leaderboard(store_for(db).run_scores([run_id for run_id, _ in signature]))


def runs_board(runs: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard rows (`tempo_eval.compare.leaderboard.leaderboard`) of every run of `runs` (a
    `runs_table`), read and aggregated in one go; cached per run ids and result counts, so a
    new result or a deleted run reads them again."""
    signature = tuple((int(i), int(n)) for i, n in zip(runs["id"], runs["n_results"], strict=True))
    return _runs_board(db_path(), signature)


@st.cache_data(show_spinner=False, max_entries=64)
def _run_setups(db: str, signature: tuple[tuple[int, str], ...]) -> dict[int, dict[str, str]]:
    configs = store_for(db).run_configs([run_id for run_id, _ in signature])
    return {run_id: run_setup(config) for run_id, config in configs.items()}


def run_setups(runs: pd.DataFrame) -> dict[int, dict[str, str]]:
    """Verifier, judge and model of every run of `runs` (`tempo_eval.compare.leaderboard.run_setup`),
    cached per run ids and configuration hashes."""
    signature = tuple((int(i), str(h)) for i, h in zip(runs["id"], runs["config_hash"], strict=True))
    return _run_setups(db_path(), signature)


@st.cache_data(show_spinner=False, max_entries=64)
def _dataset_head(db: str, dataset_id: int, rows: int, content_hash: str, n_rows: int) -> pd.DataFrame:
    return store_for(db).dataset_head(dataset_id, rows)


def dataset_head(dataset_id: int, rows: int) -> pd.DataFrame:
    """The first `rows` rows of a stored dataset (0: its columns alone), read alone
    (`RunStore.dataset_head`): a page never holds the whole frame for them (a 200,000-row dataset's
    is hundreds of MB). Keyed by its hash and row count too: a dataset being stored is read again
    once complete."""
    info = dataset_info(dataset_id)
    return _dataset_head(db_path(), int(dataset_id), int(rows), info["content_hash"], int(info["n_rows"] or 0))


@st.cache_data(show_spinner=False, max_entries=256)
def _dataset_row(db: str, dataset_id: int, row: int) -> dict[str, Any]:
    return store_for(db).dataset_row(dataset_id, row)


def dataset_row(dataset_id: int, row: int) -> dict[str, Any]:
    """One row of a stored dataset as {column: value} (`RunStore.dataset_row`), cached."""
    return _dataset_row(db_path(), int(dataset_id), int(row))


def run_version(run_id: int) -> tuple[Any, ...]:
    """What changes when a run's results change, cheap at any size: a run being written, its
    result count; any other, its status and last row (one seek, where a count reads every
    result of a 200,000-row run)."""
    status = store().run_info(int(run_id))["status"]
    if status == "running":
        return (status, n_results(run_id))
    return (status, store().last_row(int(run_id)))


@st.cache_data(show_spinner="Aggregating the run…", max_entries=64)
def _system_summary(db: str, run_id: int, version: tuple[Any, ...]) -> pd.DataFrame:
    return store_for(db).system_summary(run_id)


def system_summary(run_id: int) -> pd.DataFrame:
    """`RunStore.system_summary` (per system and metric: n, n_scored, mean, answer-currency label
    counts; aggregated by SQLite), cached per run and `run_version`."""
    return _system_summary(db_path(), int(run_id), run_version(run_id))


def forget_cached_reads() -> None:
    """Drop the cached frames after a delete or rename, so no page shows what is gone."""
    for cached in (_dataset_frame, _dataset_row, _results, _claims, _run_board, _runs_board, _run_setups,
                   _results_grid, _results_page, _metric_counts, _system_summary, _runs_table):
        cached.clear()
    run_counts.forget()


def _wide(db: str, run_id: int, long: pd.DataFrame, *, queries: bool) -> pd.DataFrame | None:
    """One run's long results as grid lines (see `results_grid`); None when it has none."""
    if long.empty:
        return None
    info = store_for(db).run_info(run_id)
    keys = ["row", "query_id", "run"]
    wide = long.set_index([*keys, "metric"])[["score", "reason_code"]].unstack("metric")
    scores = wide["score"]
    codes = wide["reason_code"].add_suffix(" reason")
    grid = pd.concat([scores, codes], axis=1).reset_index()
    grid.columns.name = None
    grid.insert(0, "eval_run", run_names.run_label(int(run_id), info["name"], info["config"]))
    grid.insert(1, "run_id", run_id)
    if queries:
        # the query column only: a 100,000-row dataset is not decoded whole for it
        column = store_for(db).dataset_column(int(info["dataset_id"]), "query")
        if column is not None:
            grid.insert(4, "query", [column[i] if 0 <= i < len(column) else None for i in grid["row"]])
    return grid.rename(columns={"run": "system"})


def _joined(parts: list[pd.DataFrame | None]) -> pd.DataFrame:
    found = [part for part in parts if part is not None]
    if not found:
        return pd.DataFrame(columns=["eval_run", "run_id", "row", "query_id", "system"])
    return pd.concat(found, ignore_index=True)


@st.cache_resource(show_spinner="Reading the results…", max_entries=16)
def _results_grid(db: str, run_ids: tuple[int, ...], sizes: tuple[int, ...]) -> pd.DataFrame:
    return _joined([_wide(db, run_id, _results(db, run_id, size), queries=True)
                    for run_id, size in zip(run_ids, sizes, strict=True)])


#: selected runs holding more results than this are read by the Results page a page at a time
#: (a line has about 6 cells per result: row, query id, query, system, a score and its reason;
#: 40,000 results make a grid the browser draws at once and the server sends in one message).
PAGED_OVER = 40_000
#: dataset rows on one page of the Results page, when paged
PAGE_ROWS = 1_000


def total_results(run_ids: Sequence[int]) -> int:
    """Results stored in these runs (one count per run, nothing loaded)."""
    return sum(n_results(int(r)) for r in run_ids)


@st.cache_data(show_spinner=False, max_entries=64)
def _metric_counts(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return store_for(db).metric_counts(run_id)


def metric_counts(run_id: int) -> pd.DataFrame:
    """`RunStore.metric_counts` (per metric: n, n_nan, last_row), cached per run and size."""
    return _metric_counts(db_path(), int(run_id), n_results(run_id))


@st.cache_resource(show_spinner=False, max_entries=8)
def _results_page(db: str, run_ids: tuple[int, ...], versions: tuple[Any, ...], first: int, last: int) -> pd.DataFrame:
    return _joined([_wide(db, run_id, store_for(db).results_rows(run_id, first, last), queries=False)
                    for run_id in run_ids])


def results_page(run_ids: list[int], first: int, last: int) -> pd.DataFrame:
    """`results_grid` of the dataset rows `first` to `last` only (without the query column): read
    with one key range per run, so a page costs what it shows, whatever the run's size; cached
    per runs and their `run_version`."""
    ids = tuple(int(r) for r in run_ids)
    return _results_page(db_path(), ids, tuple(run_version(r) for r in ids), int(first), int(last))


def row_results(run_id: int, row: int) -> pd.DataFrame:
    """The long results (`results_frame`'s columns) of one dataset row of a run."""
    return store().results_rows(int(run_id), int(row), int(row))


def results_grid(run_ids: list[int]) -> pd.DataFrame:
    """One line per (evaluation run, dataset row): eval_run (name #id), run_id, row, query_id,
    system (the dataset's run column), query, one score column per metric (NaN when not
    measurable) and one "<metric> reason" column with its reason code. Cached per runs and
    their sizes; do not modify it in place."""
    ids = tuple(int(r) for r in run_ids)
    return _results_grid(db_path(), ids, tuple(n_results(r) for r in ids))
