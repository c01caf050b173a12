"""Which dataset and runs every page works on: session state, the shared sidebar and page setup."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from tempo_eval_app import store_reads, worker_jobs
from tempo_eval_app.errors import configure_logging, page_guard
from tempo_eval_app.formatting import md_escape
from tempo_eval_app.samples import SAMPLE_QA_NAME, load_sample_qa
from tempo_eval_app.store_reads import db_path, store_for

#: session keys shared by the sidebar and the pages
#: the browser tab's icon: an image in the repository, so the app needs no font server (offline)
PAGE_ICON = str(Path(__file__).with_name("icon.png"))
DATASET_KEY = "dataset_id"
RUNS_KEY = "run_ids"
_PENDING_DATASET = "_pending_dataset_id"
_PENDING_RUNS = "_pending_run_ids"
#: the last dataset and runs drawn, in plain session keys: Streamlit drops a widget's value when a
#: run was cut short before the widget was drawn (a page switch under load, the address's query
#: parameters gone with it), and the widget then fell back to its first option, the newest dataset
_LAST_DATASET = "_dataset_last"
_LAST_RUNS = "_runs_last"


def _param_ints(name: str) -> list[int]:
    """The whole numbers of a comma-separated query parameter (`?runs=5,6`); others are left out."""
    values = []
    for part in str(st.query_params.get(name, "")).split(","):
        with contextlib.suppress(ValueError):
            values.append(int(part))
    return values


def select_dataset(dataset_id: int, run_ids: Sequence[int] = ()) -> None:
    """Make a dataset (and runs) the active ones from inside a page: applied on the next run,
    because the sidebar's widgets already exist in this one."""
    st.session_state[_PENDING_DATASET] = int(dataset_id)
    st.session_state[_PENDING_RUNS] = [int(r) for r in run_ids]
    st.rerun()


def select_runs(run_ids: Sequence[int]) -> None:
    st.session_state[_PENDING_RUNS] = [int(r) for r in run_ids]
    st.rerun()


def open_page(page: str, dataset_id: int, run_ids: Sequence[int], **params: Any) -> None:
    """Open another page on a dataset and runs (and the page's own query parameters): the
    sidebar applies the choice on the next run, and the address carries it, so the view can be
    shared as a link."""
    st.session_state[_PENDING_DATASET] = int(dataset_id)
    st.session_state[_PENDING_RUNS] = [int(r) for r in run_ids]
    query = {"dataset": str(int(dataset_id))}
    if run_ids:
        query["runs"] = ",".join(str(int(r)) for r in run_ids)
    query.update({k: str(v) for k, v in params.items() if v not in (None, "")})
    st.switch_page(page, query_params=query)


# What the sidebar lists is read on every rerun with reads that cost the same whatever the number
# of results (the datasets' names and sizes, the runs' rows, their counts kept by `run_counts`),
# and built from them: nothing is keyed on the workspace file as a whole, so a job writing
# results leaves every other dataset's and run's entries alone (issue 29: keyed on any commit,
# every rerun of every page read the dataset list again while a job ran, 20-80 ms each).

def _dataset_choices(db: str) -> tuple[list[int], dict[int, str], int | None]:
    """The stored datasets' ids (newest first, `RunStore.dataset_names`), their labels and the
    default one (None: none stored). A dataset whose rows are still being stored (its row count is
    set once they all are) is listed as "storing… (N rows so far)" (`worker_jobs.partial_label`),
    as the Datasets page shows it, not as 0 rows: the upload a user just started is there, and
    says it is not ready. It is never the default."""
    names = tuple(store_for(db).dataset_names())
    partial = worker_jobs.partial_label(worker_jobs.storing()) if any(n == 0 for _, _, n in names) else ""
    labels = {i: f"{name} ({f'{n:,} row' + ('' if n == 1 else 's') if n else partial}) · #{i}" for i, name, n in names}
    return list(labels), labels, _default_dataset(names)


def _run_choices(db: str, dataset_id: int) -> tuple[list[int], dict[int, str], list[int]]:
    """A dataset's runs: ids (newest first), labels, and the default choice: the newest run that
    has results and is not failed (a run whose rows all failed is never what a page opens on)."""
    runs = store_reads.runs_table(dataset_id)
    labels = {int(r.id): f"{store_reads.run_label(int(r.id), r.name, r.config_hash)} ({r.status}, {r.n_results:,} results)"
              for r in runs.itertuples()}
    usable = runs[(runs["status"] != "failed") & (runs["n_results"] > 0)]
    return list(labels), labels, [int(usable["id"].iloc[0])] if not usable.empty else []


def sidebar() -> None:
    """Which dataset and which evaluation runs every page works on.

    On a fresh workspace the bundled sample is stored and selected, so the app opens on data.
    The choice is mirrored in the query parameters (`?dataset=3&runs=5,6`), so a link reopens
    the same view.
    """
    db = db_path()
    ids, names, first = _dataset_choices(db)
    if not ids:
        load_sample_qa()
        ids, names, first = _dataset_choices(db)
    state = st.session_state
    if _PENDING_DATASET in state:
        state[DATASET_KEY] = state.pop(_PENDING_DATASET)
    if state.get(DATASET_KEY) not in ids:
        wanted = _param_ints("dataset")
        last = state.get(_LAST_DATASET)
        state[DATASET_KEY] = wanted[0] if wanted and wanted[0] in ids else last if last in ids else first
    with st.sidebar:
        st.markdown("### Data")
        # the choice is also the widget's default: a browser that draws the widget anew (its value
        # dropped with a run cut short) starts from it, not from the first option, the newest
        # dataset, which it would then send back as the session's choice (issue 29: sessions walking
        # the sample landed on a 1-million-row dataset, whose frame Compare then read)
        dataset_id = st.selectbox("Dataset", ids, index=ids.index(state[DATASET_KEY]), key=DATASET_KEY,
                                  format_func=lambda i: names.get(int(i), f"#{i}"))
        state[_LAST_DATASET] = dataset_id
        run_ids, labels, default = _run_choices(db, int(dataset_id))
        if _PENDING_RUNS in state:
            state[RUNS_KEY] = [r for r in state.pop(_PENDING_RUNS) if r in run_ids]
        if RUNS_KEY not in state:
            wanted = [r for r in _param_ints("runs") if r in run_ids]
            last_for, last_runs = state.get(_LAST_RUNS, (None, []))
            kept = [r for r in last_runs if r in run_ids] if last_for == dataset_id else []
            state[RUNS_KEY] = wanted or kept or default
        else:
            state[RUNS_KEY] = [r for r in state[RUNS_KEY] if r in run_ids] or (
                default if state.get("_runs_for") != dataset_id else []
            )
        state["_runs_for"] = dataset_id
        chosen = st.multiselect(
            "Evaluation runs", run_ids, default=state[RUNS_KEY], key=RUNS_KEY,
            format_func=lambda i: labels.get(int(i), f"#{i}"),
            help="Runs of this dataset stored in the workspace. Evaluate the dataset to add one.",
        )
        state[_LAST_RUNS] = (dataset_id, list(chosen))
        # always the same number of elements: a sidebar that changes length leaves stale copies
        # on screen while a fragment reruns
        hint = "" if run_ids else "No evaluation run yet for this dataset: open **Evaluate**. "
        st.caption(hint + f"Workspace: {md_escape(Path(db).parent)}")
    st.query_params["dataset"] = str(dataset_id)
    if state[RUNS_KEY]:
        st.query_params["runs"] = ",".join(str(r) for r in state[RUNS_KEY])
    elif "runs" in st.query_params:
        del st.query_params["runs"]

_entry = threading.local()


@contextlib.contextmanager
def shared_sidebar() -> Iterator[None]:
    """Draw the sidebar from the entry script, around the page run.

    Widgets created by the entry script keep their state across pages (widgets created by a
    page belong to that page and are dropped when another page opens), so the dataset and run
    choice live here. A page run on its own (tests, a single script) draws it in `page_setup`.
    """
    with page_guard("sidebar"):
        sidebar()
    _entry.active = True
    try:
        yield
    finally:
        _entry.active = False


def keep_page_settings() -> None:
    """Keep the values of widgets keyed "keep_..." (settings on a page) when another page opens:
    re-assigning them makes them session values, which Streamlit does not drop."""
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith("keep_"):
            st.session_state[key] = st.session_state[key]


def page_setup(title: str) -> None:
    """The first call of every page: page config (when the page runs on its own), logging, the
    title, and the shared sidebar when the entry script did not draw it."""
    with contextlib.suppress(st.errors.StreamlitAPIException):
        st.set_page_config(page_title=f"{title} · tempo-eval", page_icon=PAGE_ICON, layout="wide")
    configure_logging()
    st.title(md_escape(title))
    if not getattr(_entry, "active", False):
        with page_guard("sidebar"):
            sidebar()


def _default_dataset(names: Sequence[tuple[int, str, int]]) -> int | None:
    """Of the datasets (id, name, n_rows), newest first: the sample QA dataset when present (what
    the app opens on), else the newest complete dataset (the newest one when none is complete);
    None when there is none."""
    complete = [d for d in names if d[2] > 0] or list(names)
    sample = [i for i, name, _ in complete if name == SAMPLE_QA_NAME]
    return sample[0] if sample else complete[0][0] if complete else None


def active_dataset_id() -> int | None:
    value = st.session_state.get(DATASET_KEY)
    return None if value is None else int(value)


def require_dataset_id() -> int:
    """The active dataset's id; without one, say where to get one and stop the page. A dataset
    still being stored stops the page too (its pages would read, score and cache part of it)."""
    dataset_id = active_dataset_id()
    if dataset_id is None:
        st.info("No dataset yet: open **Datasets** to upload one or load the sample.")
        st.stop()
    db = db_path()
    if any(i == dataset_id and n == 0 for i, _, n in store_for(db).dataset_names()):  # rows not all stored
        _, labels, _ = _dataset_choices(db)
        st.info(f"This dataset's rows are not all stored yet: {md_escape(labels.get(dataset_id, ''))}. Its pages open "
                "once it is complete; **Datasets** shows its progress.")
        st.stop()
    return dataset_id


def active_run_ids() -> list[int]:
    return [int(r) for r in st.session_state.get(RUNS_KEY, [])]
