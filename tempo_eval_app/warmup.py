"""A warm server before the analysts' first pages: the pages' modules imported and the shared
caches filled, once per process, in a background thread.

Streamlit runs no code of the app before the first session's script run, so that run starts the
warm-up (`start_once`). Without it, the first pages of sessions that open together queued on the
import locks of the modules the pages import lazily (the engine's metrics, the charts) and on the
first computation of the dataset's focus-time scores, which every Overview waits for (issue 29:
30 to 36 s for the first page at 20 sessions). The warm-up reads what a session opens on: the
default dataset, with its focus-time scores when the Overview scores it on the fly, and its
newest runs' results; the modules of every page, so the second page is warm too.

What the warm-up computes goes into the same caches the pages read (same functions, same
arguments), so a page never waits for more than one computation of a value. It never imports a
model library (torch, transformers): the pages do not either (tests/test_load_serving.py). A
failure is logged and changes nothing: the pages compute what they need as before.
"""

from __future__ import annotations

import importlib
import threading
import time

from tempo_eval_app.errors import logger

#: the modules the pages import inside functions (the top-level ones come with the pages' own
#: imports): the engine's parts they call and the charts
PAGE_MODULES = (
    "tempo_eval.core.extract",
    "tempo_eval.metrics.temporal_faithfulness",
    "tempo_eval.metrics.temporal_ndcg",
    "tempo_eval.metrics.ndcg",
    "tempo_eval.metrics.answer_currency",
    "tempo_eval.metrics.evidence_age",
    "tempo_eval.compare",
    "tempo_eval.leaderboard",
    "tempo_eval.viz.highlight",
    "tempo_eval.viz.evidence_age",
    "tempo_eval.viz.scatter",
    "tempo_eval.viz.curves",
    "tempo_eval.viz.heatmap",
    "tempo_eval_app.asof_scores",
    "tempo_eval_app.focus_scores",
    "tempo_eval_app.overview_runs",
    "tempo_eval_app.row_detail",
    "tempo_eval_app.score_scale",
    "tempo_eval_app.downloads",
    "tempo_eval_app.retrieval",
    "tempo_eval_app.verifier_notes",
    "plotly.graph_objects",
)

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start_once(db: str) -> bool:
    """Start the warm-up of the workspace database `db` in a background thread, the first time
    this is called in the process; True when it started it."""
    global _thread
    with _lock:
        if _thread is not None:
            return False
        _thread = threading.Thread(target=warm, args=(db,), name="tempo-eval-warm-up", daemon=True)
        _thread.start()
        return True


def wait(timeout: float | None = None) -> bool:
    """Wait for the warm-up started in this process (tests); True when none runs any more."""
    thread = _thread
    if thread is not None:
        thread.join(timeout)
        return not thread.is_alive()
    return True


def warm(db: str) -> None:
    """Import the pages' modules, then fill the caches a new session's pages read first."""
    started = time.perf_counter()
    try:
        for name in PAGE_MODULES:
            importlib.import_module(name)
        _fill_caches(db)
    except Exception as exc:  # the pages compute what they need themselves
        logger.warning("warm-up of the dashboard stopped: %s", exc)
        return
    logger.info("dashboard warm: pages' modules and caches ready in %.1f s", time.perf_counter() - started)


def _fill_caches(db: str) -> None:
    """The default dataset's frame and focus-time scores (when the Overview scores it on the
    fly) and its default runs' results grid, with the arguments the pages pass."""
    from tempo_eval_app import focus_scores, overview_runs, selection, store_reads

    if store_reads.db_path() != db:  # the workspace changed meanwhile (tests): the keys would not match
        return
    ids, _, default = selection._dataset_choices(db)
    if default is None:
        return
    info = store_reads.store_for(db).dataset_info(default)
    store_reads._dataset_frame(db, default)
    if int(info["n_rows"] or 0) <= overview_runs.ON_THE_FLY_ROWS:
        focus_scores._focus_time_scores(db, default, 10)  # the Overview's default k
    _, _, runs = selection._run_choices(db, default)
    if runs and sum(store_reads.n_results(r) for r in runs) <= store_reads.PAGED_OVER:  # else read by page
        store_reads._results_grid(db, tuple(runs), tuple(store_reads.n_results(r) for r in runs))
