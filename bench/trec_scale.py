"""Retriever runs at MS MARCO dev's size: tempo_eval compare against pytrec_eval and ranx.

    python bench/trec_scale.py                       # 6,980 queries x 1,000 documents, 10 runs
    python bench/trec_scale.py --queries 700 --runs 3  # a quick, smaller check

Generates, in a temporary folder (or --dir), qrels with about 1.1 relevant documents per query
and --runs run files of --queries x --docs lines (about 263 MB each at full size; scores rounded
to 3 decimals, so ties occur; run 2 has no results for 2% of the judged queries), then measures,
each in a child process of its own (time from the child's first import to its end, peak memory
as the child's own high-water mark, VmHWM):

- pytrec_eval: pytrec_eval.parse_qrel / parse_run (its Python parsing), RelevanceEvaluator with
  ndcg_cut.10 on two runs, missing judged queries scored 0 (-c), scipy's paired t-test;
- ranx: Qrels/Run.from_file, compare(..., stat_test="student") on two runs (numba compiles on
  its first call: a warm-up call is made first and not timed, unless --ranx-cold);
- ours: `python -m tempo_eval compare A B --qrels Q --test student` (the command line, its
  parsing included), and with the default Fisher test; the NDCG@1..100 curves against a single
  k (`tempo_eval.compare.trec_scores.score_trec_files`); and every run in one `compare`.

Prints the times, the peak memory, the ratios against the targets (two runs at least 2x faster
than pytrec_eval with no more memory; the curves at most 1.5x a single k; ten runs within 8 GB),
and the number of per-query values that differ from pytrec_eval's (expected 0).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: passage ids below this are the runs' filler documents; judged documents are drawn above it
_FILLER = 1 << 23


def generate(folder: Path, n_queries: int, n_docs: int, n_runs: int, seed: int = 0) -> tuple[Path, list[Path]]:
    """Qrels and `n_runs` run files of MS MARCO dev's shape in `folder`."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    qids = rng.choice(np.arange(1, 1_200_000), n_queries, replace=False).astype(str)
    relevant = _FILLER + rng.choice(450_000, n_queries, replace=False)  # one per query
    extra = rng.random(n_queries) < 0.1  # about 1.1 relevant documents per query
    qrels = pa.table({
        "qid": np.concatenate([qids, qids[extra]]), "iter": np.zeros(n_queries + extra.sum(), np.int64),
        "docid": np.concatenate([relevant, relevant[extra] + 450_000]),
        "rel": np.ones(n_queries + extra.sum(), np.int64),
    })
    qrels_path = folder / "qrels.dev.tsv"
    _write(qrels, qrels_path, pacsv)
    runs = []
    for r in range(n_runs):
        keep = np.ones(n_queries, bool)
        if r == 1:
            keep[rng.choice(n_queries, int(round(0.02 * n_queries)), replace=False)] = False
        q = int(keep.sum())
        start = rng.integers(0, _FILLER, q)
        step = rng.integers(0, _FILLER // 2, q) * 2 + 1  # odd: (start + step * j) mod 2^23 never repeats
        docs = (start[:, None] + step[:, None] * np.arange(n_docs)[None, :]) % _FILLER
        found = rng.random(q) < 0.8
        rank = np.minimum(rng.geometric(0.15, q) - 1, n_docs - 1)
        docs[np.flatnonzero(found), rank[found]] = relevant[keep][found]
        scores = np.round(np.sort(rng.normal(20, 3, (q, n_docs)), axis=1)[:, ::-1], 3)
        table = pa.table({
            "qid": np.repeat(qids[keep], n_docs), "q0": np.full(q * n_docs, "Q0"), "docid": docs.ravel(),
            "rank": np.tile(np.arange(1, n_docs + 1), q), "score": scores.ravel(),
            "tag": np.full(q * n_docs, f"run{r:02d}"),
        })
        path = folder / f"run{r:02d}.trec"
        _write(table, path, pacsv)
        runs.append(path)
        del table, docs, scores
    return qrels_path, runs


def _write(table, path: Path, pacsv) -> None:
    pacsv.write_csv(table, path, pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))


# ---- children: each measures itself and prints one JSON line -----------------------------------

def child_pytrec(qrels: str, runs: list[str], out: str) -> dict:
    import pytrec_eval
    from scipy import stats

    with open(qrels) as handle:
        judgments = pytrec_eval.parse_qrel(handle)
    evaluator = pytrec_eval.RelevanceEvaluator(judgments, {"ndcg_cut.10"})
    judged = [q for q, docs in judgments.items() if any(g > 0 for g in docs.values())]
    values = {}
    for path in runs:
        with open(path) as handle:
            run = pytrec_eval.parse_run(handle)
        result = evaluator.evaluate(run)
        values[path] = {q: result[q]["ndcg_cut_10"] if q in result else 0.0 for q in judged}
        del run, result
    a, b = (list(values[p].values()) for p in runs)
    p_value = float(stats.ttest_rel(a, b).pvalue)
    Path(out).write_text(json.dumps(values))
    return {"means": [sum(v.values()) / len(v) for v in values.values()], "p": p_value}


def child_ranx(qrels: str, runs: list[str], cold: bool) -> dict:
    from ranx import Qrels, Run, compare

    if not cold:  # numba compiles on the first call; warm it on a tiny input
        tiny_q = Qrels({"q": {"d": 1}})
        compare(tiny_q, runs=[Run({"q": {"d": 1.0}}, name="x"), Run({"q": {"d": 0.5, "e": 1.0}}, name="y")],
                metrics=["ndcg@10"], stat_test="student")
    started = time.perf_counter()
    judged = Qrels.from_file(qrels, kind="trec")
    loaded = [Run.from_file(p, kind="trec") for p in runs]
    for i, run in enumerate(loaded):
        run.name = f"r{i}"
    report = compare(judged, runs=loaded, metrics=["ndcg@10"], stat_test="student", make_comparable=True)
    return {"seconds_after_warmup": time.perf_counter() - started,
            "means": [report.results[r.name]["ndcg@10"] for r in loaded]}


def child_ours_cli(qrels: str, runs: list[str], test: str, out: str | None) -> dict:
    import contextlib
    import io

    from tempo_eval.cli import main

    args = ["compare", *runs, "--qrels", qrels, "--test", test, "--metric", "ndcg@10"]
    if out:
        args += ["--per-query", out]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(args)
    return {"exit": code, "table": buffer.getvalue()}


def child_ours_scores(qrels: str, runs: list[str], curve: bool) -> dict:
    from tempo_eval.compare.trec_scores import score_trec_files

    scores = score_trec_files(runs, qrels, metrics=["ndcg@10"], curve_k=100 if curve else None)
    return {"runs": len(scores.runs), "missing": scores.missing}


def run_child(kind: str, *args: str) -> dict:
    """Run this file as a child measuring `kind`; its JSON plus seconds and peak memory (GB)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen([sys.executable, __file__, "--child", kind, *args], stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)  # the child's own peak memory
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        lines = (stderr or stdout).strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {process.returncode}"}
    result = json.loads(stdout.strip().splitlines()[-1])
    # the child's own high-water mark; ru_maxrss would also count the parent's memory at fork
    result["peak_gb"] = result.pop("hwm_kb", usage.ru_maxrss) / 1024**2
    return result


def _high_water_kb() -> int | None:
    """This process's peak resident memory (VmHWM, reset by exec), in kB; None off Linux."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return None


def _child_main(kind: str, args: list[str]) -> None:
    started = time.perf_counter()
    if kind == "pytrec":
        result = child_pytrec(args[0], args[1:-1], args[-1])
    elif kind == "ranx":
        result = child_ranx(args[0], args[2:], args[1] == "cold")
    elif kind == "cli":
        out = None if args[2] == "-" else args[2]
        result = child_ours_cli(args[0], args[3:], args[1], out)
    else:
        result = child_ours_scores(args[0], args[1:], kind == "curve")
    result["seconds"] = time.perf_counter() - started
    if _high_water_kb() is not None:
        result["hwm_kb"] = _high_water_kb()
    print(json.dumps(result))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=10, help="runs for the many-runs measure (default 10)")
    parser.add_argument("--dir", help="generate here and keep the files (default: a temporary folder)")
    parser.add_argument("--skip-ranx", action="store_true")
    parser.add_argument("--ranx-cold", action="store_true", help="time ranx's first call, numba compiling")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child_main(args.child[0], args.child[1:])
        return 0
    with tempfile.TemporaryDirectory(prefix="trec_scale_") as temporary:
        folder = Path(args.dir) if args.dir else Path(temporary)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        qrels, runs = generate(folder, args.queries, args.docs, max(2, args.runs))
        size = runs[0].stat().st_size / 1e6
        print(f"generated {len(runs)} runs of {args.queries} queries x {args.docs} documents "
              f"({size:,.0f} MB each) in {time.perf_counter() - started:.0f} s; load {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")
        return _measure(folder, qrels, runs, args)


def _measure(folder: Path, qrels: Path, runs: list[Path], args) -> int:
    two = [str(runs[0]), str(runs[1])]
    theirs_values, ours_values = folder / "pytrec.json", folder / "ours.csv"
    pytrec = run_child("pytrec", str(qrels), *two, str(theirs_values))
    ranx = None if args.skip_ranx else run_child("ranx", str(qrels), "cold" if args.ranx_cold else "warm", *two)
    ours = run_child("cli", str(qrels), "student", str(ours_values), *two)
    fisher = run_child("cli", str(qrels), "fisher", "-", *two)
    single = run_child("single", str(qrels), *two)
    curve = run_child("curve", str(qrels), *two)
    many = run_child("cli", str(qrels), "student", "-", *map(str, runs))

    def line(name: str, result: dict | None) -> None:
        if result is None:
            return
        if "error" in result:
            print(f"{name:<48} failed: {result['error']}")
            return
        extra = f" (after warm-up {result['seconds_after_warmup']:.1f} s)" if "seconds_after_warmup" in result else ""
        print(f"{name:<48} {result['seconds']:7.1f} s  {result['peak_gb']:5.2f} GB peak{extra}")

    print()
    line("pytrec_eval, 2 runs, ndcg_cut.10 + t-test", pytrec)
    line("ranx, 2 runs, ndcg@10 + t-test", ranx)
    line("ours: compare, 2 runs, ndcg@10 + t-test", ours)
    line("ours: compare, 2 runs, ndcg@10 + Fisher", fisher)
    line("ours: scores, 2 runs, NDCG@10", single)
    line("ours: scores, 2 runs, NDCG@1..100 curves", curve)
    line(f"ours: compare, {len(runs)} runs, ndcg@10 + t-test", many)
    print()
    if "error" not in pytrec and "error" not in ours:
        speed = pytrec["seconds"] / ours["seconds"]
        memory = ours["peak_gb"] / pytrec["peak_gb"]
        print(f"two runs: {speed:.2f}x faster than pytrec_eval (target >= 2), "
              f"memory {memory:.2f}x pytrec_eval's (target <= 1)")
        print(f"per-query values differing from pytrec_eval: {_mismatches(theirs_values, ours_values, two)}")
    if ranx and "error" not in ranx and "error" not in ours:
        print(f"two runs: {ranx['seconds'] / ours['seconds']:.2f}x faster than ranx (its time with warm-up "
              f"excluded: {ranx['seconds_after_warmup'] / ours['seconds']:.2f}x), memory {ours['peak_gb'] / ranx['peak_gb']:.2f}x ranx's")
    if "error" not in single and "error" not in curve:
        print(f"curves k=1..100: {curve['seconds'] / single['seconds']:.2f}x a single k (target <= 1.5)")
    if "error" not in many:
        print(f"{len(runs)} runs in one compare: {many['peak_gb']:.2f} GB peak (target <= 8)")
    print(f"load average now {os.getloadavg()[0]:.1f}")
    return 0


def _mismatches(theirs_path: Path, ours_path: Path, runs: list[str]) -> int:
    import csv

    theirs = json.loads(theirs_path.read_text())
    names = {}
    for path in runs:  # the runs are tagged run00, run01
        names[Path(path).stem] = theirs[path]
    count = 0
    with open(ours_path, newline="") as handle:
        for row in csv.DictReader(handle):
            expected = names[row["run"]].get(row["query_id"])
            if expected is None or float(row["value"] or "nan") != expected:
                count += 1
    return count


if __name__ == "__main__":
    raise SystemExit(main())
