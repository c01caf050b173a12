"""The bundled sample datasets the app opens on.

They are the app's own data, not anyone's upload: any role stores them (a fresh shared workspace
opens on the sample for a viewer too), through the store directly, not `store_reads.save_dataset`
(which only a role that may upload passes). The user who first opened a sample is recorded as
who stored it, like any dataset."""

from __future__ import annotations

from pathlib import Path

from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.trec_dataset import load_runs_dataset
from tempo_eval_app.identity import current_user
from tempo_eval_app.store_reads import store

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample"
SAMPLE_QA_NAME = "Sample: temporal QA (30 questions)"
SAMPLE_RUNS_NAME = "Sample: retriever runs BM25 vs dense"


def load_sample_qa() -> int:
    """Store the bundled temporal QA sample (idempotent) and return its dataset id."""
    dataset = load_dataset(SAMPLE_DIR / "temporal_qa.csv")
    dataset.name = SAMPLE_QA_NAME
    return store().save_dataset(dataset, user=current_user())


def load_sample_runs() -> int:
    """Store the bundled BM25 and dense runs with qrels, queries and corpus as one dataset."""
    with (SAMPLE_DIR / "run_bm25.trec").open("rb") as bm25, (SAMPLE_DIR / "run_dense.trec").open("rb") as dense:
        dataset = load_runs_dataset(
            runs=[("bm25", bm25.read()), ("dense", dense.read())],
            qrels=("qrels.txt", (SAMPLE_DIR / "qrels.txt").read_bytes()),
            queries=("temporal_qa.csv", (SAMPLE_DIR / "temporal_qa.csv").read_bytes()),
            corpus=("corpus.jsonl", (SAMPLE_DIR / "corpus.jsonl").read_bytes()),
            name=SAMPLE_RUNS_NAME,
        )
    return store().save_dataset(dataset, user=current_user())
