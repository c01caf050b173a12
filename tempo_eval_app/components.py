"""Shared widgets and state of the dashboard: the store, the sidebar, error handling, downloads.

Pages are thin scripts: they call `tempo_eval` for every number and `tempo_eval.viz` for every
figure; what two pages share lives here. Heavy objects (the run store) are created once per
process with `st.cache_resource`; data read from the store is cached with `st.cache_data`,
keyed by the workspace database path so separate workspaces never mix.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from tempo_eval.io.errors import InputError
from tempo_eval.store.db import WorkspaceError, default_db_path
from tempo_eval.store.runs import RunStore
from tempo_eval.verify.base import VerifierUnavailable

logger = logging.getLogger("tempo_eval_app")

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample"
SAMPLE_QA_NAME = "Sample: temporal QA (30 questions)"
SAMPLE_RUNS_NAME = "Sample: retriever runs BM25 vs dense"

#: session keys shared by the sidebar and the pages
DATASET_KEY = "dataset_id"
RUNS_KEY = "run_ids"
_PENDING_DATASET = "_pending_dataset_id"
_PENDING_RUNS = "_pending_run_ids"


# ---- logging and errors ---------------------------------------------------------------------

def configure_logging() -> None:
    """Log to stderr once per process (the "details in the log" of every error message)."""
    root = logging.getLogger()
    if not any(getattr(h, "_tempo_eval", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._tempo_eval = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)


def error_message(exc: BaseException) -> str:
    """What the user reads: an InputError, an unavailable verifier or an unusable workspace as it
    is; anything else as one line plus "details in the log"."""
    if isinstance(exc, (InputError, VerifierUnavailable, WorkspaceError)):
        return str(exc)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    line = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(line) > 300:
        line = line[:297] + "..."
    return f"Something went wrong: {line} (details in the log)."


@contextlib.contextmanager
def page_guard(where: str = "page") -> Iterator[None]:
    """Catch any error of a page body and show it as `st.error`; never a traceback.

    Streamlit's own control flow (st.stop, st.rerun) derives from BaseException and passes.
    """
    try:
        yield
    except (InputError, VerifierUnavailable) as exc:
        logger.info("%s: %s", where, exc)
        show_error(exc)
    except Exception as exc:
        logger.exception("unexpected error in %s", where)
        show_error(exc)


def show_error(exc: BaseException) -> None:
    """`st.error` with `error_message(exc)`, markdown-escaped (messages quote user input)."""
    st.error(md_escape(error_message(exc)), icon=":material/error:")


# ---- the store and the datasets -------------------------------------------------------------

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


def load_sample_qa() -> int:
    """Store the bundled temporal QA sample (idempotent) and return its dataset id."""
    from tempo_eval.io.dataset import load_dataset

    dataset = load_dataset(SAMPLE_DIR / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    return save_dataset(dataset)


def load_sample_runs() -> int:
    """Store the bundled BM25 and dense runs with qrels, queries and corpus as one dataset."""
    from tempo_eval_app.retrieval import load_runs_dataset

    with (SAMPLE_DIR / "run_bm25.trec").open("rb") as bm25, (SAMPLE_DIR / "run_dense.trec").open("rb") as dense:
        dataset = load_runs_dataset(
            runs=[("bm25", bm25.read()), ("dense", dense.read())],
            qrels=("qrels.txt", (SAMPLE_DIR / "qrels.txt").read_bytes()),
            queries=("temporal_qa.csv", (SAMPLE_DIR / "temporal_qa.csv").read_bytes()),
            corpus=("corpus.jsonl", (SAMPLE_DIR / "corpus.jsonl").read_bytes()),
            name=SAMPLE_RUNS_NAME,
        )
    return save_dataset(dataset)


def select_dataset(dataset_id: int, run_ids: Sequence[int] = ()) -> None:
    """Make a dataset (and runs) the active ones from inside a page: applied on the next run,
    because the sidebar's widgets already exist in this one."""
    st.session_state[_PENDING_DATASET] = int(dataset_id)
    st.session_state[_PENDING_RUNS] = [int(r) for r in run_ids]
    st.rerun()


def select_runs(run_ids: Sequence[int]) -> None:
    st.session_state[_PENDING_RUNS] = [int(r) for r in run_ids]
    st.rerun()


# ---- the shared sidebar ---------------------------------------------------------------------

def _dataset_label(datasets: pd.DataFrame) -> Callable[[int], str]:
    names = {int(r.id): f"{r.name} ({r.n_rows} rows) · #{r.id}" for r in datasets.itertuples()}
    return lambda i: names.get(int(i), f"#{i}")


def _param_ints(name: str) -> list[int]:
    raw = st.query_params.get(name, "")
    values = []
    for part in str(raw).split(","):
        with contextlib.suppress(ValueError):
            values.append(int(part))
    return values


def sidebar() -> None:
    """Which dataset and which evaluation runs every page works on.

    On a fresh workspace the bundled sample is stored and selected, so the app opens on data.
    The choice is mirrored in the query parameters (`?dataset=3&runs=5,6`), so a link reopens
    the same view.
    """
    s = store()
    datasets = s.list_datasets()
    if datasets.empty:
        load_sample_qa()
        datasets = s.list_datasets()
    ids = [int(i) for i in datasets["id"]]
    state = st.session_state
    if _PENDING_DATASET in state:
        state[DATASET_KEY] = state.pop(_PENDING_DATASET)
    if state.get(DATASET_KEY) not in ids:
        wanted = _param_ints("dataset")
        state[DATASET_KEY] = wanted[0] if wanted and wanted[0] in ids else _default_dataset(datasets)
    with st.sidebar:
        st.markdown("### Data")
        dataset_id = st.selectbox("Dataset", ids, key=DATASET_KEY, format_func=_dataset_label(datasets))
        runs = s.list_runs(dataset_id)
        run_ids = [int(i) for i in runs["id"]]
        if _PENDING_RUNS in state:
            state[RUNS_KEY] = [r for r in state.pop(_PENDING_RUNS) if r in run_ids]
        if RUNS_KEY not in state:
            wanted = [r for r in _param_ints("runs") if r in run_ids]
            state[RUNS_KEY] = wanted or run_ids[:1]
        else:
            state[RUNS_KEY] = [r for r in state[RUNS_KEY] if r in run_ids] or (
                run_ids[:1] if state.get("_runs_for") != dataset_id else []
            )
        state["_runs_for"] = dataset_id
        labels = {int(r.id): f"{r.name} · #{r.id} ({r.status}, {r.n_results} results)" for r in runs.itertuples()}
        st.multiselect(
            "Evaluation runs", run_ids, key=RUNS_KEY, format_func=lambda i: labels.get(int(i), f"#{i}"),
            help="Runs of this dataset stored in the workspace. Evaluate the dataset to add one.",
        )
        # always the same number of elements: a sidebar that changes length leaves stale copies
        # on screen while a fragment reruns
        hint = "" if run_ids else "No evaluation run yet for this dataset: open **Evaluate**. "
        st.caption(f"{hint}Workspace: `{Path(db_path()).parent}`")
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
        st.set_page_config(page_title=f"{title} · tempo-eval", layout="wide")
    configure_logging()
    st.title(title)
    if not getattr(_entry, "active", False):
        with page_guard("sidebar"):
            sidebar()


def _default_dataset(datasets: pd.DataFrame) -> int:
    """The sample QA dataset when present (what the app opens on), else the newest dataset."""
    sample = datasets[datasets["name"] == SAMPLE_QA_NAME]
    return int(sample["id"].iloc[0]) if not sample.empty else int(datasets["id"].iloc[0])


def active_dataset_id() -> int | None:
    value = st.session_state.get(DATASET_KEY)
    return None if value is None else int(value)


def require_dataset_id() -> int:
    """The active dataset's id; without one, say where to get one and stop the page."""
    dataset_id = active_dataset_id()
    if dataset_id is None:
        st.info("No dataset yet: open **Datasets** to upload one or load the sample.")
        st.stop()
    return dataset_id


def active_run_ids() -> list[int]:
    return [int(r) for r in st.session_state.get(RUNS_KEY, [])]


def run_label(run_id: int) -> str:
    info = store().run_info(run_id)
    return f"{info['name']} #{run_id}"


# ---- cached reads of results ----------------------------------------------------------------

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


# ---- focus times of a dataset's texts -------------------------------------------------------

@st.cache_data(show_spinner=False, max_entries=32)
def _years_of_column(db: str, dataset_id: int, column: str, reference_date: str | None) -> list[Any]:
    from tempo_eval.core.extract import extract_aft, extract_dft, extract_qft

    frame = _dataset_frame(db, dataset_id)
    if column not in frame.columns:
        return [None] * len(frame)
    extract = {"query": extract_qft, "answer": extract_aft}.get(column, extract_dft)
    dates = frame["reference_date"] if "reference_date" in frame.columns else [None] * len(frame)
    out: list[Any] = []
    for value, row_date in zip(frame[column], dates, strict=True):
        ref = row_date if isinstance(row_date, str) and row_date else reference_date
        if isinstance(value, str):
            out.append(sorted(extract(value, reference_date=ref).years))
        elif isinstance(value, (list, tuple)):
            out.append([sorted(extract_dft(text, reference_date=ref).years) for text in value if isinstance(text, str)])
        else:
            out.append(None)
    return out


def years_of_column(dataset_id: int, column: str, reference_date: str | None = None) -> list[Any]:
    """Per row, the focus-time years of a text column (a list of years), or of each text of a
    list column (a list of lists); None where the cell is missing."""
    return _years_of_column(db_path(), int(dataset_id), column, reference_date)


# ---- rendering helpers ----------------------------------------------------------------------

def safe_html(body_html: str) -> None:
    """Render HTML built by `tempo_eval.viz.highlight` (user text already escaped there)."""
    from tempo_eval.viz.highlight import text_block

    st.html(text_block(body_html))


def fmt_score(value: float) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _jsonl(frame: pd.DataFrame) -> bytes:
    return frame.to_json(orient="records", lines=True, force_ascii=False, default_handler=str).encode("utf-8")


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    jsonify_cells(frame).to_parquet(buffer, index=False)
    return buffer.getvalue()


def jsonify_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy with list and dict cells as JSON text (Parquet and table display need one type per
    column; gold_ids mixes lists and graded objects)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object and any(isinstance(v, (dict, list, tuple, set)) for v in out[column]):
            out[column] = [None if v is None else json.dumps(v, default=str, ensure_ascii=False) for v in out[column]]
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The CSV download of a table: list and dict cells as JSON, text cells that a spreadsheet
    would run as a formula (= + - @ ...) prefixed with a quote; read back exactly by
    `tempo_eval.io.export.read_csv_export`."""
    from tempo_eval.io.export import to_csv_text

    return to_csv_text(jsonify_cells(frame)).encode("utf-8")


def download_results(frame: pd.DataFrame, stem: str, *, key: str) -> None:
    """CSV, JSONL and Parquet downloads of a results table; files are built only when clicked."""
    columns = st.columns(3)
    columns[0].download_button(
        "CSV", data=lambda: csv_bytes(frame), file_name=f"{stem}.csv",
        mime="text/csv", key=f"{key}_csv", icon=":material/download:",
    )
    columns[1].download_button(
        "JSONL", data=lambda: _jsonl(frame), file_name=f"{stem}.jsonl", mime="application/jsonl",
        key=f"{key}_jsonl", icon=":material/download:",
    )
    columns[2].download_button(
        "Parquet", data=lambda: _parquet(frame), file_name=f"{stem}.parquet",
        mime="application/vnd.apache.parquet", key=f"{key}_parquet", icon=":material/download:",
    )


def download_figure(fig: Any, stem: str, *, key: str) -> None:
    """The figure as standalone HTML (plotly.js embedded, works offline) and as plotly JSON."""
    columns = st.columns(2)
    columns[0].download_button(
        "Figure (HTML)", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8"),
        file_name=f"{stem}.html", mime="text/html", key=f"{key}_html", icon=":material/image:",
    )
    columns[1].download_button(
        "Figure (JSON)", data=lambda: fig.to_json().encode("utf-8"), file_name=f"{stem}.json",
        mime="application/json", key=f"{key}_json", icon=":material/data_object:",
    )


def param(name: str, default: str | None = None) -> str | None:
    """A query parameter of the current URL (views reopen from links)."""
    value = st.query_params.get(name)
    return default if value in (None, "") else str(value)


def set_params(**values: Any) -> None:
    """Mirror a page's view state in the URL; None removes a parameter."""
    for name, value in values.items():
        if value is None or value == "" or value == []:
            if name in st.query_params:
                del st.query_params[name]
        else:
            text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
            if st.query_params.get(name) != text:
                st.query_params[name] = text


def init_from_param(key: str, name: str, convert: Callable[[str], Any] = str, valid: Callable[[Any], bool] | None = None) -> None:
    """Seed a widget's session value from a query parameter on first render only."""
    if key in st.session_state:
        return
    raw = param(name)
    if raw is None:
        return
    try:
        value = convert(raw)
    except (TypeError, ValueError):
        return
    if valid is None or valid(value):
        st.session_state[key] = value


#: the query parameters of the shared sidebar, part of every page's link
SIDEBAR_PARAMS = ("dataset", "runs")


def view_query(names: Sequence[str]) -> str:
    """The URL query (``?dataset=3&runs=5``) of the sidebar's and the page's own parameters
    `names`, URL-encoded; other parameters of the address (stale or typed by anyone) are left out."""
    from urllib.parse import urlencode

    params = st.query_params.to_dict()
    wanted = [n for n in dict.fromkeys([*SIDEBAR_PARAMS, *names]) if params.get(n) not in (None, "")]
    return "?" + urlencode([(n, params[n]) for n in wanted]) if wanted else ""


def view_link(*names: str) -> None:
    """Tell the user that the address bar reopens this view, with the page's own parameters
    `names`: the query is shown with `st.code` (plain text, never markdown), so a value from the
    URL cannot end a code span and inject links or images."""
    query = view_query(names)
    if query:
        st.caption("Link to this view: the page address with this query reopens it.")
        st.code(query, language=None)
    else:
        st.caption("")


# ---- failed rows of a run ------------------------------------------------------------------

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


# ---- the judge's API key -----------------------------------------------------------------------

KEY_TYPED = "the key typed here (this session only)"
KEY_SERVER = "the server's OPENAI_API_KEY"
KEY_NONE = "no key"


def judge_api_key(base_url: str, typed_key: str, env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """The API key the LLM judge gets, and which key that is (one of KEY_TYPED, KEY_SERVER, KEY_NONE).

    - a key typed on the page is used as it is, with any endpoint;
    - a custom endpoint (`base_url`) with no typed key gets the placeholder "not-needed": the
      server's OPENAI_API_KEY must never go to an address a visitor typed;
    - the default endpoint with no typed key: None, so the provider reads the server's
      OPENAI_API_KEY (KEY_SERVER when it is set, KEY_NONE when not).
    """
    from tempo_eval.llm.provider import PLACEHOLDER_API_KEY

    env = os.environ if env is None else env
    if typed_key.strip():
        return typed_key.strip(), KEY_TYPED
    if base_url.strip():
        return PLACEHOLDER_API_KEY, KEY_NONE
    return None, KEY_SERVER if env.get("OPENAI_API_KEY") else KEY_NONE


# ---- focus-time scores of a dataset (no model, computed on the fly) -------------------------

FOCUS_COLUMNS = [
    "query_id", "run", "temporal_faithfulness", "tf_reason", "ndcg_focus_time", "ndcg_ft_reason",
    "ndcg_gold", "ndcg_gold_reason",
]


def _measure_or_nan(metric: Any, row: dict[str, Any]) -> tuple[float, str]:
    """(score, reason) of one metric on one row; an error becomes NaN with its message."""
    try:
        result = metric.measure(**metric.inputs_from_row(row))
    except Exception as exc:  # one bad row must not hide the others
        logger.warning("row %s, %s: %s", row.get("query_id"), metric.name, exc)
        return math.nan, f"not measurable: {exc}"
    reason = result.reason or ""
    if result.reason_code and math.isnan(result.score):
        reason = f"[{result.reason_code}] {reason}"
    return result.score, reason


@st.cache_data(show_spinner="Computing focus-time metrics…", max_entries=16)
def _focus_time_scores(db: str, dataset_id: int, k: int) -> pd.DataFrame:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG

    frame = _dataset_frame(db, dataset_id)
    faithfulness = TemporalFaithfulness(mode="focus_time")
    ndcg_focus = TemporalNDCG(k=k, mode="focus_time")
    ndcg_gold = TemporalNDCG(k=k, mode="gold")
    records = []
    for row in frame.to_dict(orient="records"):
        record: dict[str, Any] = {"query_id": row.get("query_id"), "run": row.get("run")}
        has = {name for name, value in row.items() if value is not None and not (isinstance(value, float) and math.isnan(value))}
        record["temporal_faithfulness"], record["tf_reason"] = (
            _measure_or_nan(faithfulness, row) if {"answer", "contexts"} <= has else (math.nan, "no answer or contexts")
        )
        record["ndcg_focus_time"], record["ndcg_ft_reason"] = (
            _measure_or_nan(ndcg_focus, row) if {"query", "contexts"} <= has else (math.nan, "no query or contexts")
        )
        record["ndcg_gold"], record["ndcg_gold_reason"] = (
            _measure_or_nan(ndcg_gold, row) if {"retrieved_ids", "gold_ids"} <= has else (math.nan, "no retrieved_ids or gold_ids")
        )
        records.append(record)
    return pd.DataFrame.from_records(records, columns=FOCUS_COLUMNS)


def focus_time_scores(dataset_id: int, k: int = 10) -> pd.DataFrame:
    """Per row: Temporal Faithfulness (focus time), Temporal NDCG@k (focus time and gold), with
    the reason of each score; NaN where not measurable (the reason says why)."""
    return _focus_time_scores(db_path(), int(dataset_id), int(k))


def peek_columns(data: bytes, name: str) -> list[str]:
    """The column names of an uploaded table, best effort, for the mapping editor only (the
    loader stays the judge of the file; [] when the header cannot be read)."""
    import gzip

    lower = name.lower()
    try:
        if lower.endswith(".gz"):
            data, lower = gzip.decompress(data), lower[:-3]
        if lower.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            return [str(c) for c in pq.read_schema(io.BytesIO(data)).names]
        text = data.decode("utf-8-sig", errors="replace")
        if lower.endswith((".jsonl", ".ndjson")):
            first = next((line for line in text.splitlines() if line.strip()), "")
            record = json.loads(first)
            return [str(k) for k in record] if isinstance(record, dict) else []
        if lower.endswith(".json"):
            value = json.loads(text)
            if isinstance(value, dict):
                value = next((v for v in value.values() if isinstance(v, list)), [])
            return list(dict.fromkeys(str(k) for r in value[:100] if isinstance(r, dict) for k in r))
        sep = "\t" if lower.endswith((".tsv", ".tab")) else ","
        return [str(c) for c in pd.read_csv(io.StringIO(text), sep=sep, nrows=0).columns]
    except Exception:  # a malformed file: the loader's error is what the user sees
        return []


def multiselect_default(key: str, options: Sequence[Any], default: Sequence[Any] | None = None) -> list[Any] | None:
    """The `default` to pass to a keyed multiselect: None when the session already holds a value
    (after dropping values no longer among the options), else `default` (all options if None)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]
        return None
    return list(options if default is None else default)


_MD_SPECIAL = "\\`*_{}[]()<>#+-.!|~$:"


def md_escape(text: object) -> str:
    """User text made inert inside Streamlit markdown (captions, labels): every markdown and HTML
    character backslash-escaped, so a name like `[x](javascript:...)` shows as typed."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def plain(text: object, *, muted: bool = False) -> None:
    """User text as escaped HTML (no markdown, no HTML of its own)."""
    import html

    style = "color: #555; font-size: 0.9em" if muted else ""
    st.html(f'<div style="{style}; white-space: pre-wrap">{html.escape(str(text))}</div>')
