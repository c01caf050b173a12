"""The workspace's run store and cached reads of it (datasets, results, claims).

The store is created once per process with `st.cache_resource`; frames read from it are cached
with `st.cache_data`, keyed by the workspace database path so separate workspaces never mix."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.store.db import default_db_path
from tempo_eval.store.runs import RunStore


@st.cache_resource(show_spinner=False)
def _store_for(db_path: str) -> RunStore:
    return RunStore(db_path)


def db_path() -> str:
    return str(default_db_path())


def store() -> RunStore:
    """The run store of the current workspace (one connection per process and workspace)."""
    return _store_for(db_path())


@st.cache_data(show_spinner=False, max_entries=32)
def _dataset_frame(db: str, dataset_id: int) -> pd.DataFrame:
    return _store_for(db).dataset_frame(dataset_id)


def dataset_frame(dataset_id: int) -> pd.DataFrame:
    """The canonical frame of a stored dataset (cached; do not modify it in place)."""
    return _dataset_frame(db_path(), int(dataset_id))


def dataset_info(dataset_id: int) -> dict[str, Any]:
    return store().dataset_info(int(dataset_id))


def save_dataset(dataset: Any) -> int:
    return store().save_dataset(dataset)


@st.cache_data(show_spinner=False, max_entries=64)
def _results(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return _store_for(db).results_frame(run_id)


@st.cache_data(show_spinner=False, max_entries=64)
def _claims(db: str, run_id: int, n_results: int) -> pd.DataFrame:
    return _store_for(db).claims_frame(run_id)


def _n_results(run_id: int) -> int:
    # part of the cache key: a run still being written is read again as it grows
    metrics = store().run_summary(int(run_id))["metrics"]
    return sum(int(m["n"]) for m in metrics.values())


def results_frame(run_id: int) -> pd.DataFrame:
    return _results(db_path(), int(run_id), _n_results(run_id))


def claims_frame(run_id: int) -> pd.DataFrame:
    return _claims(db_path(), int(run_id), _n_results(run_id))


def run_label(run_id: int) -> str:
    info = store().run_info(run_id)
    return f"{info['name']} #{run_id}"
