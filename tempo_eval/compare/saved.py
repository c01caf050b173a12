"""A comparison of TREC run files saved in the workspace: what the dashboard's worker computes
and the Compare page reads.

The worker (`python -m tempo_eval job run`, job kind `compare_runs`) calls `compute`: it scores
the run files with `tempo_eval.compare.trec_scores.score_trec_files` and writes the per-query values to
a folder of the workspace's `cache/compare/`, named by the SHA-256 of the files' bytes and of the
settings, so the same files and settings, under any name or path, are scored once and a reload,
another browser session or another app process finds the finished comparison. The page reads the
folder with `StoredComparison.load`.

The folder (written under a temporary name, then renamed: it is complete or absent):
- `meta.json`: runs, as-of metrics, missing-query counts and policy, notes, settings;
- `curves.parquet`: run, query_id, ndcg@1 .. ndcg@MAX_K (every cutoff the page offers);
- `per_query.parquet`: run, query_id, metric, value of the as-of metrics at the settings' k;
- `documents.parquet`: `TrecScores.documents(MAX_K, dated_k=k)`: each run's ranked documents,
  with their dates, ages and flags (future, stale, undated) up to rank k when dates were given.

The as-of metrics (with a doc-dates and a query-dates file) are future_leak@k, stale_evidence@k
(`max_age`), median_age@k and recency_ndcg@k (`half_life`), as `compare --metric` names them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tempo_eval.common.confine import open_binary

#: NDCG is kept at every cutoff up to this (the page's largest k)
MAX_K = 100
#: the folder layout's version: a new one never reads an old folder
SCHEMA = 1
#: the as-of metrics, in the order the page shows them
AS_OF = ("future_leak", "stale_evidence", "median_age", "recency_ndcg")


def cache_root() -> Path:
    """`cache/compare/` of the current workspace."""
    from tempo_eval.store.db import comparisons_dir

    return comparisons_dir()


def settings_of(arguments: dict[str, Any]) -> dict[str, Any]:
    """What, besides the files' bytes, decides the result: the missing-query policy, the score
    precision and, with dates, k, max_age and half_life."""
    from tempo_eval.metrics.asof import DEFAULT_HALF_LIFE, DEFAULT_MAX_AGE

    settings = {"schema": SCHEMA, "max_k": MAX_K, "missing": arguments.get("missing", "zero"),
                "precision": arguments.get("precision", "float32")}
    if dated(arguments):
        settings.update(k=int(arguments.get("k") or 10),
                        max_age=float(arguments.get("max_age") or DEFAULT_MAX_AGE),
                        half_life=float(arguments.get("half_life") or DEFAULT_HALF_LIFE))
    return settings


def dated(arguments: dict[str, Any]) -> bool:
    """Whether both date files are given (the as-of metrics need both)."""
    return bool(arguments.get("doc_dates") and arguments.get("query_dates"))


def _inputs(arguments: dict[str, Any]) -> list[tuple[str, Path]]:
    files = [("run", Path(p)) for p in arguments["runs"]] + [("qrels", Path(arguments["qrels"]))]
    if dated(arguments):
        files += [("doc_dates", Path(arguments["doc_dates"])), ("query_dates", Path(arguments["query_dates"]))]
    return files


def content_key(arguments: dict[str, Any]) -> str:
    """SHA-256 of every input file's role and bytes, in order, and of the settings."""
    digest = hashlib.sha256(json.dumps(settings_of(arguments), sort_keys=True).encode())
    for role, path in _inputs(arguments):
        file_digest = hashlib.sha256()
        with open_binary(path) as handle:  # confined in a dashboard job (`tempo_eval.common.confine`)
            while chunk := handle.read(1 << 22):
                file_digest.update(chunk)
        digest.update(role.encode() + b"\0" + file_digest.digest())
    return digest.hexdigest()


class Cancelled(Exception):
    """The job's cancel event was set while the files were read."""


def compute(arguments: dict[str, Any], progress: Callable[[float], None] | None = None,
            cancel: Any = None) -> dict[str, Any] | None:
    """The worker's job: score the files of `arguments` (runs: paths, qrels: a path; doc_dates
    and query_dates: paths or None; missing, precision, k, max_age, half_life) unless a folder
    for the same bytes and settings exists, and return {"key": folder name}; None when `cancel`
    (a threading.Event) is set before the comparison is saved. Bad input raises the readers'
    errors (InputError, DateError), which name the file, the line and the value."""
    from tempo_eval.compare.trec_scores import score_trec_files

    def report(fraction: float) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled
        if progress is not None:
            progress(fraction)

    try:
        report(0.0)
        key = content_key(arguments)
        folder = cache_root() / key
        if not (folder / "meta.json").is_file():
            settings = settings_of(arguments)
            metrics = [f"ndcg@{MAX_K}"]
            dates: dict[str, Any] = {}
            if dated(arguments):
                metrics += [f"{name}@{settings['k']}" for name in AS_OF]
                dates = {"doc_dates": arguments["doc_dates"], "query_dates": arguments["query_dates"],
                         "max_age": settings["max_age"], "half_life": settings["half_life"]}
            scores = score_trec_files(list(arguments["runs"]), arguments["qrels"], metrics=metrics,
                                      missing=settings["missing"], precision=settings["precision"],
                                      curve_k=MAX_K, progress=lambda f: report(0.8 * f), **dates)
            if len(scores.runs) < 2:
                raise ValueError("a comparison needs at least two runs; the run files hold "
                                 f"{len(scores.runs)}")
            report(0.85)
            write(scores, folder, settings, names={str(p): p.name for _, p in _inputs(arguments)})
        report(1.0)
        return {"key": key}
    except Cancelled:
        return None


def write(scores: Any, folder: Path, settings: dict[str, Any], *, names: dict[str, str] | None = None) -> None:
    """Save `scores` (a `TrecScores`) to `folder` (see the module docstring), atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = settings.get("k")
    as_of = [m for m in scores.metrics if m.partition("@")[0] in AS_OF]
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = folder.with_name(f"{folder.name}.part-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    curve_parts = []
    for run, (query_ids, matrix) in scores.curves.items():
        columns = {"run": [run] * len(query_ids), "query_id": list(query_ids)}
        columns.update({f"ndcg@{c + 1}": matrix[:, c].astype(np.float64) for c in range(matrix.shape[1])})
        curve_parts.append(pa.table(columns))
    pq.write_table(pa.concat_tables(curve_parts), partial / "curves.parquet")
    rows = [(run, q, metric, v) for run in scores.runs for metric in as_of
            for q, v in scores.per_query[run][metric].items()]
    per_query = pd.DataFrame(rows, columns=["run", "query_id", "metric", "value"]).astype({"value": float})
    pq.write_table(pa.Table.from_pandas(per_query, preserve_index=False), partial / "per_query.parquet")
    documents = scores.documents(MAX_K, dated_k=int(k) if as_of else 0, max_age=settings.get("max_age"))
    pq.write_table(pa.Table.from_pandas(documents, preserve_index=False), partial / "documents.parquet")
    meta = {
        "schema": SCHEMA, "runs": scores.runs, "as_of": as_of, "missing": scores.missing,
        "missing_everywhere": scores.missing_everywhere, "n_judged": scores.n_judged, "policy": scores.policy,
        "notes": scores.notes, "settings": settings,
        "origins": {run: [(names or {}).get(source, Path(source).name), tag]
                    for run, (source, tag) in scores.origins.items()},
    }
    (partial / "meta.json").write_text(json.dumps(meta, indent=1))
    try:
        partial.rename(folder)
    except OSError:  # another worker wrote the same comparison first: keep theirs
        shutil.rmtree(partial, ignore_errors=True)


@dataclass
class StoredComparison:
    """A saved comparison (see the module docstring), as the Compare page reads it."""

    key: str
    runs: list[str]
    as_of: list[str]
    settings: dict[str, Any]
    missing: dict[str, int]
    missing_everywhere: int
    n_judged: int
    policy: str
    notes: list[str]
    origins: dict[str, list[str]]
    #: run -> (query ids, NDCG@1..MAX_K matrix)
    curves: dict[str, tuple[list[str], np.ndarray]]
    #: the as-of metrics: run, query_id, metric, value
    values: pd.DataFrame
    #: ranked documents: run, query_id, rank, doc_id, grade (+ date, as_of, age, flag)
    documents: pd.DataFrame

    @classmethod
    def load(cls, folder: Path) -> StoredComparison:
        import pyarrow.parquet as pq

        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("schema") != SCHEMA:
            raise ValueError(f"{folder}: saved by another version (layout {meta.get('schema')}, expected {SCHEMA})")
        frame = pq.read_table(folder / "curves.parquet").to_pandas()
        cutoffs = [c for c in frame.columns if c.startswith("ndcg@")]
        curves = {}
        for run in meta["runs"]:
            part = frame[frame["run"] == run]
            curves[run] = (part["query_id"].astype(str).tolist(), part[cutoffs].to_numpy(dtype=np.float64))
        return cls(
            key=folder.name, runs=list(meta["runs"]), as_of=list(meta["as_of"]), settings=dict(meta["settings"]),
            missing={str(r): int(n) for r, n in meta["missing"].items()}, missing_everywhere=int(meta["missing_everywhere"]),
            n_judged=int(meta["n_judged"]), policy=str(meta["policy"]), notes=list(meta["notes"]),
            origins=dict(meta["origins"]), curves=curves,
            values=pq.read_table(folder / "per_query.parquet").to_pandas(),
            documents=pq.read_table(folder / "documents.parquet").to_pandas(),
        )

    # ---- per query ------------------------------------------------------------------------------

    @property
    def k(self) -> int | None:
        """The cutoff of the as-of metrics (None without dates)."""
        return int(self.settings["k"]) if self.as_of else None

    def metrics(self, k: int) -> list[str]:
        """ndcg@k, then the as-of metrics."""
        return [f"ndcg@{k}", *self.as_of]

    def per_query(self, k: int) -> dict[str, dict[str, dict[str, float]]]:
        """per_query[run][metric][query_id]: NDCG@k (1 <= k <= MAX_K) and the as-of metrics."""
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        out: dict[str, dict[str, dict[str, float]]] = {}
        for run, (query_ids, matrix) in self.curves.items():
            out[run] = {f"ndcg@{k}": dict(zip(query_ids, matrix[:, k - 1].tolist(), strict=True))}
        for (run, metric), part in self.values.groupby(["run", "metric"], sort=False):
            out[str(run)][str(metric)] = dict(zip(part["query_id"].astype(str), part["value"].astype(float), strict=True))
        for run in out:
            for metric in self.as_of:
                out[run].setdefault(metric, {})
        return out

    def curves_at(self, k: int) -> dict[str, dict[str, list[float]]]:
        """{run: {query_id: NDCG@1..k}} for the curve chart."""
        return {run: dict(zip(ids, matrix[:, :k].tolist(), strict=True)) for run, (ids, matrix) in self.curves.items()}

    def missing_summary(self) -> str:
        from tempo_eval.compare.statistics import missing_summary

        return missing_summary(self.missing, n_judged=self.n_judged, everywhere=self.missing_everywhere,
                               policy=self.policy)

    def report(self, k: int, **options: Any) -> Any:
        """`tempo_eval.compare.statistics.compare` of NDCG@k and the as-of metrics, with the missing-query
        counts (as `tempo_eval.compare.trec_scores.compare_scores` gives the command line)."""
        from tempo_eval.compare.statistics import compare

        metrics = self.metrics(k)
        report = compare(self.per_query(k), metrics=metrics, **options)
        filled = {m: dict(self.missing) for m in metrics if "ndcg" in m} if self.policy == "zero" else {}
        return replace(report, n_filled=filled, missing_note=self.missing_summary())

    def cis(self, k: int, **options: Any) -> dict[str, dict[str, tuple[float, float]]]:
        """95% bootstrap intervals of each run's mean of each metric (`tempo_eval.compare.statistics.mean_cis`)."""
        from tempo_eval.compare.statistics import mean_cis

        return mean_cis(self.per_query(k), self.metrics(k), **options)

    # ---- documents ------------------------------------------------------------------------------

    def ranked(self, run: str, query_id: str, k: int) -> pd.DataFrame:
        """The run's first k documents for a query: rank, doc_id, grade (+ date, as_of, age, flag)."""
        docs = self.documents
        part = docs[(docs["run"] == run) & (docs["query_id"] == str(query_id)) & (docs["rank"] <= k)]
        return part.drop(columns=["run", "query_id"]).reset_index(drop=True)

    def ages(self) -> dict[str, np.ndarray]:
        """Each run's evidence ages (days) over the top-k documents of its queries with an as-of
        date; documents without a publication date are left out."""
        if not self.as_of or "age" not in self.documents.columns:
            return {}
        docs = self.documents[self.documents["rank"] <= int(self.settings["k"])]
        return {run: docs.loc[docs["run"] == run, "age"].dropna().to_numpy(dtype=float) for run in self.runs}

    def leaking(self, run: str) -> pd.DataFrame:
        """The run's queries with future_leak > 0, worst first: query_id, as_of, the as-of
        metrics and how many of its top-k documents are from the future."""
        if not self.as_of:
            return pd.DataFrame(columns=["query_id"])
        mine = self.values[self.values["run"] == run]
        wide = mine.pivot_table(index="query_id", columns="metric", values="value", aggfunc="first", dropna=False)
        wide = wide.reindex(columns=self.as_of)
        wide.columns.name = None
        leak = self.as_of[0]
        wide = wide[wide[leak] > 0].reset_index()
        docs = self.documents[(self.documents["run"] == run) & (self.documents["rank"] <= int(self.settings["k"]))]
        counts = docs[docs["flag"] == "future"].groupby("query_id").size()
        as_of = docs.groupby("query_id")["as_of"].first()
        wide.insert(1, "as_of", wide["query_id"].map(as_of))
        wide["future documents"] = wide["query_id"].map(counts).fillna(0).astype(int)
        return wide.sort_values([leak, "query_id"], ascending=[False, True], ignore_index=True)


def is_saved(key: str) -> bool:
    """Whether the comparison `key` (a folder name, nothing else) is saved in this workspace."""
    return Path(key).name == key and key not in ("", ".", "..") and (cache_root() / key / "meta.json").is_file()


def load(key: str) -> StoredComparison | None:
    """The saved comparison `key` of the current workspace, or None when it is not there."""
    return StoredComparison.load(cache_root() / key) if is_saved(key) else None

